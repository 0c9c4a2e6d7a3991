package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// Stats is what a workload did in one run.
type Stats struct {
	// Ops is the operations completed: reads or writes, round trips, timer
	// wakeups, children or threads created, hog spin rounds (noise kind).
	Ops uint64
	// Syscalls counts, by name, the syscalls the workload's own threads
	// made during the run (the Go runtime's are not included). Every call
	// is counted, failed and interrupted ones too.
	Syscalls map[string]uint64
	// Metrics holds user-space measurements, e.g. "timer.lateness"; nil
	// when the workload measures nothing itself.
	Metrics map[string]*hist.Histogram
	// CPUs are the CPUs the measured threads were pinned to, increasing;
	// nil when they were left to the scheduler (one CPU, or a kind that
	// does not pin).
	CPUs []int
}

// Runner drives a prepared workload.
// ThreadHook is told, with its thread id, when a measured workload thread
// starts (running true) and when it is done, so that tracers can count the
// workload's own threads rather than every thread of the process.
type ThreadHook func(tid int, running bool)

type threadHookKey struct{}

// WithThreadHook returns a context for Runner.Run that carries hook.
func WithThreadHook(ctx context.Context, hook ThreadHook) context.Context {
	return context.WithValue(ctx, threadHookKey{}, hook)
}

type cpuOffsetKey struct{}

// WithCPUOffset returns a context for Runner.Run under which the i-th
// measured thread is pinned to the (i+offset)-th CPU it may run on, modulo
// their number, instead of the i-th: independent trials choose their CPUs
// anew, so that what differs between CPUs is part of the trial-to-trial
// variation instead of fixed for a run.
func WithCPUOffset(ctx context.Context, offset int) context.Context {
	return context.WithValue(ctx, cpuOffsetKey{}, offset)
}

func cpuOffsetOf(ctx context.Context) int {
	n, _ := ctx.Value(cpuOffsetKey{}).(int)
	return max(n, 0)
}

func threadHookOf(ctx context.Context) ThreadHook {
	h, _ := ctx.Value(threadHookKey{}).(ThreadHook)
	return h
}

// ThreadsAttributable reports whether every thread doing w's work is a
// thread the workload starts itself, and so reported to a ThreadHook. The
// thread mode of fork is not: the Go runtime creates the threads it
// measures, from threads of its own choosing.
func ThreadsAttributable(w Workload) bool {
	return !(w.Kind == "fork" && w.Mode == "thread")
}

type Runner interface {
	// Run drives the workload until ctx is done and returns what this call
	// did. Every thread it started has stopped when it returns. Run may be
	// called again (warmup, then each trial) but not concurrently. The end
	// of ctx is the normal end of a run, not an error.
	Run(ctx context.Context) (Stats, error)
	// Close releases what NewWorkload prepared (files, channels).
	Close() error
}

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("workload closed")

// ErrUnsupported is returned by NewWorkload where the workloads are not
// built (anything but linux/amd64).
var ErrUnsupported = errors.New("workloads need linux/amd64")

// NewWorkload checks w, fills in defaults for zero fields and prepares the
// workload: it opens files and channels, and checks that a SCHED_FIFO
// priority can be set, so that Run fails only on what happens while running.
func NewWorkload(w Workload) (Runner, error) {
	w = w.withDefaults()
	if err := w.check(); err != nil {
		return nil, err
	}
	return newRunner(w)
}

// Workload kinds and the values their parameters take.
var (
	workloadKinds    = []string{"syscall", "pingpong", "timer", "fork", "noise"}
	workloadSyscalls = []string{"read", "write", "getppid"}
	pingpongChannels = []string{"pipe", "eventfd", "futex"}
	forkModes        = []string{"fork", "thread"}
)

// kindKeys lists the YAML keys each workload kind takes, in the order the
// error messages name them.
var kindKeys = map[string][]string{
	"syscall":  {"kind", "syscall", "size", "threads", "rate", "noise"},
	"pingpong": {"kind", "channel", "pairs", "noise"},
	"timer":    {"kind", "interval", "priority", "threads", "noise"},
	"fork":     {"kind", "mode", "threads", "noise"},
	"noise":    {"kind", "noise"},
}

// Parameter bounds. They keep a typo from asking for a million threads.
const (
	maxThreads  = 256
	maxPairs    = 64
	maxSize     = 1 << 20
	maxRate     = 1e7 // per thread
	minInterval = 10 * time.Microsecond
	maxInterval = time.Second
	maxPriority = 99 // SCHED_FIFO
	maxNoise    = 1024
)

// withDefaults returns w with zero parameters of its kind set to defaults.
func (w Workload) withDefaults() Workload {
	switch w.Kind {
	case "syscall":
		if w.Syscall == "" {
			w.Syscall = DefaultSyscall
		}
		if w.Size == 0 && (w.Syscall == "read" || w.Syscall == "write") {
			w.Size = DefaultSize
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	case "pingpong":
		if w.Channel == "" {
			w.Channel = DefaultChannel
		}
		if w.Pairs == 0 {
			w.Pairs = DefaultPairs
		}
	case "timer":
		if w.Interval == 0 {
			w.Interval = DefaultInterval
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	case "fork":
		if w.Mode == "" {
			w.Mode = DefaultMode
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	case "noise":
		if w.Noise == 0 {
			w.Noise = NoiseNumCPU
		}
	}
	return w
}

// check validates a workload built in Go rather than parsed. Parse checks
// the same things with positions.
func (w Workload) check() error {
	keys, ok := kindKeys[w.Kind]
	if !ok {
		return fmt.Errorf("unknown workload kind %q; allowed: %s", w.Kind, strings.Join(workloadKinds, ", "))
	}
	set := map[string]bool{
		"syscall":  w.Syscall != "",
		"size":     w.Size != 0,
		"threads":  w.Threads != 0,
		"rate":     w.Rate != 0,
		"channel":  w.Channel != "",
		"pairs":    w.Pairs != 0,
		"interval": w.Interval != 0,
		"priority": w.Priority != 0,
		"mode":     w.Mode != "",
	}
	for _, k := range slices.Sorted(mapKeys(set)) {
		if set[k] && !slices.Contains(keys, k) {
			return fmt.Errorf("%s does not apply to workload kind %s", k, w.Kind)
		}
	}
	if w.Kind == "syscall" && w.Syscall == "getppid" && w.Size != 0 {
		return errors.New("size does not apply to syscall getppid")
	}
	var errs []error
	switch w.Kind {
	case "syscall":
		errs = append(errs, checkOneOf("syscall", w.Syscall, workloadSyscalls))
		if w.Syscall != "getppid" {
			errs = append(errs, checkIntRange("size", w.Size, 1, maxSize))
		}
		errs = append(errs, checkIntRange("threads", w.Threads, 1, maxThreads), checkRate(w.Rate))
	case "pingpong":
		errs = append(errs, checkOneOf("channel", w.Channel, pingpongChannels), checkIntRange("pairs", w.Pairs, 1, maxPairs))
	case "timer":
		errs = append(errs, checkInterval(w.Interval), checkIntRange("priority", w.Priority, 0, maxPriority),
			checkIntRange("threads", w.Threads, 1, maxThreads))
	case "fork":
		errs = append(errs, checkOneOf("mode", w.Mode, forkModes), checkIntRange("threads", w.Threads, 1, maxThreads))
	}
	errs = append(errs, checkNoise(w.Noise))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func checkOneOf(what, v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("unknown %s %q; allowed: %s", what, v, strings.Join(allowed, ", "))
}

func checkIntRange(what string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s must be from %d to %d, got %d", what, lo, hi, v)
	}
	return nil
}

func checkRate(r float64) error {
	if math.IsNaN(r) || r < 0 || r > maxRate {
		return fmt.Errorf("rate must be from 0 (closed loop) to %g operations per second per thread, got %g", maxRate, r)
	}
	return nil
}

func checkInterval(d time.Duration) error {
	if d < minInterval || d > maxInterval {
		return fmt.Errorf("interval must be from %v to %v, got %v", minInterval, maxInterval, d)
	}
	return nil
}

func checkNoise(n int) error {
	if n != NoiseNumCPU && (n < 0 || n > maxNoise) {
		return fmt.Errorf(`noise must be "ncpu" or from 0 to %d hog threads, got %d`, maxNoise, n)
	}
	return nil
}
