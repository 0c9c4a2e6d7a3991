package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/tracing"
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
	// Device is the block device of the workload's own it wrote (the
	// fsync kind's device: scratch); nil for none.
	Device *result.Device
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
	k, ok := lookupKind(w.Kind)
	return !ok || k.ThreadsAttributable == nil || k.ThreadsAttributable(w)
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

// WorkloadKind is a workload kind as the registry (workloadKinds) knows
// it: its YAML keys, how they are read, checked and defaulted, and how the
// workload is prepared. The built-in Go kinds share the parameter fields
// of Workload (threads, rate, ...); a kind with keys of its own keeps
// them in a type of its own, in Workload.Params. To add a kind, write
// its file and add it to workloadKinds (docs/registry.md).
type WorkloadKind struct {
	Name string
	// Internal kinds (attach, what run --pid and --cgroup measure) are not
	// written in scenario files: parsing and error messages leave them out.
	Internal bool
	// HostOnly says why the kind cannot run in a VM guest, "" if it can.
	HostOnly string
	// Keys are the YAML keys the kind takes beside kind and noise, in the
	// order errors name them. Keys that are fields of Workload are read
	// into them; the others are the kind's own, read by Parse.
	Keys []string
	// Parse reads the kind's own keys (those of Keys that are not fields
	// of Workload) from fs into w.Params, with errors made by
	// config.Node.Errorf at the key or value at fault; at is the workload
	// key, for what is missing. nil when the kind has no keys of its own.
	Parse func(w *Workload, at config.Node, fs []config.Field) error
	// DecodeParams reads w.Params back from the workload's JSON object
	// (the kind's keys beside the others); nil when the kind has no keys
	// of its own.
	DecodeParams func(b []byte) (any, error)
	// Defaults sets w's zero parameters to the kind's defaults; nil when
	// there are none.
	Defaults func(w *Workload)
	// Check validates w, with defaults filled in, as built in Go rather
	// than parsed (Parse checks with positions); nil when there is nothing
	// to check beyond the keys.
	Check func(w Workload) error
	// New prepares the workload, for process pid. A kind written for
	// linux/amd64 only has a stub in workload_other.go.
	New func(w Workload, pid int) (kindLoad, error)
	// Metrics are what the workload measures itself, in user space.
	Metrics []WorkloadMetric
	// Syscalls are the syscalls whose latency is w's operation, the
	// syscall tracer's default; nil for none.
	Syscalls func(w Workload) []string
	// ThreadsAttributable reports whether every thread doing w's work is
	// one the workload starts itself (see the function of that name); nil
	// means always.
	ThreadsAttributable func(w Workload) bool
}

// WorkloadMetric is a metric a workload measures itself.
type WorkloadMetric struct {
	Name        string // e.g. timer.lateness
	Description string // for tailgate list
}

// workloadKinds are the workload kinds, in the order errors and tailgate
// list name them.
var workloadKinds = []WorkloadKind{
	syscallKind,
	pingpongKind,
	timerKind,
	forkKind,
	noiseKind,
	execKind,
	attachKind,
	tcpRRKind,
	fsyncKind,
}

// WorkloadKinds returns the workload kinds.
func WorkloadKinds() []WorkloadKind { return slices.Clone(workloadKinds) }

func lookupKind(name string) (WorkloadKind, bool) {
	for _, k := range workloadKinds {
		if k.Name == name {
			return k, true
		}
	}
	return WorkloadKind{}, false
}

func kindNames() []string {
	var names []string
	for _, k := range workloadKinds {
		if !k.Internal {
			names = append(names, k.Name)
		}
	}
	return names
}

// kindLoad is one workload kind, prepared.
type kindLoad interface {
	run(ctx context.Context) (Stats, error)
	// threads is how many threads of the run may be running Go code at
	// once, for sizing GOMAXPROCS.
	threads() int
	close() error
}

// The values the parameters of the built-in kinds take.
var (
	workloadSyscalls = []string{"read", "write", "getppid"}
	pingpongChannels = []string{"pipe", "eventfd", "futex"}
	forkModes        = []string{"fork", "thread"}
	timerSleeps      = []string{TimerSleepRaw, TimerSleepRuntime}
)

var syscallKind = WorkloadKind{
	Name: "syscall",
	Keys: []string{"syscall", "size", "threads", "rate", "cpus"},
	Defaults: func(w *Workload) {
		if w.Syscall == "" {
			w.Syscall = DefaultSyscall
		}
		if w.Size == 0 && (w.Syscall == "read" || w.Syscall == "write") {
			w.Size = DefaultSize
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	},
	Check: func(w Workload) error {
		if w.Syscall == "getppid" && w.Size != 0 {
			return errors.New("size does not apply to syscall getppid")
		}
		errs := []error{checkOneOf("syscall", w.Syscall, workloadSyscalls)}
		if w.Syscall != "getppid" {
			errs = append(errs, checkIntRange("size", w.Size, 1, maxSize))
		}
		errs = append(errs, checkIntRange("threads", w.Threads, 1, maxThreads), checkRate(w.Rate), checkCPUs(w.CPUs))
		return firstError(errs)
	},
	New:      newSyscallKind,
	Syscalls: func(w Workload) []string { return []string{w.Syscall} },
}

var pingpongKind = WorkloadKind{
	Name: "pingpong",
	Keys: []string{"channel", "pairs", "cpus"},
	Defaults: func(w *Workload) {
		if w.Channel == "" {
			w.Channel = DefaultChannel
		}
		if w.Pairs == 0 {
			w.Pairs = DefaultPairs
		}
	},
	Check: func(w Workload) error {
		return firstError([]error{checkOneOf("channel", w.Channel, pingpongChannels), checkIntRange("pairs", w.Pairs, 1, maxPairs), checkCPUs(w.CPUs)})
	},
	New: newPingpongKind,
}

var timerKind = WorkloadKind{
	Name: "timer",
	Keys: []string{"interval", "priority", "threads", "mlock", "dma_latency", "sleep", "cpus"},
	Defaults: func(w *Workload) {
		if w.Interval == 0 {
			w.Interval = DefaultInterval
		}
		if w.MLock == nil {
			on := DefaultMLock
			w.MLock = &on
		}
		if w.DMALatency == nil {
			d := DefaultDMALatency
			w.DMALatency = &d
		}
		if w.Sleep == "" {
			w.Sleep = DefaultTimerSleep
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	},
	Check: func(w Workload) error {
		return firstError([]error{checkInterval(w.Interval), checkIntRange("priority", w.Priority, 0, maxPriority),
			checkIntRange("threads", w.Threads, 1, maxThreads), checkIntRange("dma_latency", *w.DMALatency, DMALatencyLeave, maxDMALatency),
			checkOneOf("timer sleep", w.Sleep, timerSleeps), checkCPUs(w.CPUs)})
	},
	New:     newTimerKind,
	Metrics: []WorkloadMetric{{Name: MetricTimerLateness, Description: "user-space lateness of clock_nanosleep wakeups"}},
}

var forkKind = WorkloadKind{
	Name: "fork",
	Keys: []string{"mode", "threads"},
	Defaults: func(w *Workload) {
		if w.Mode == "" {
			w.Mode = DefaultMode
		}
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
	},
	Check: func(w Workload) error {
		return firstError([]error{checkOneOf("mode", w.Mode, forkModes), checkIntRange("threads", w.Threads, 1, maxThreads)})
	},
	New: newForkKind,
	// The Go runtime creates the threads of the thread mode, from threads
	// of its own choosing.
	ThreadsAttributable: func(w Workload) bool { return w.Mode != "thread" },
}

var noiseKind = WorkloadKind{
	Name: "noise",
	Defaults: func(w *Workload) {
		if w.Noise == 0 {
			w.Noise = NoiseNumCPU
		}
	},
	New: newNoiseKind,
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
	// maxDMALatency is a second, in µs: beyond it no idle state is ruled
	// out anyway.
	maxDMALatency = 1000000
)

// withDefaults returns w with zero parameters of its kind set to defaults.
func (w Workload) withDefaults() Workload {
	if k, ok := lookupKind(w.Kind); ok && k.Defaults != nil {
		k.Defaults(&w)
	}
	return w
}

// sharedKeys are the YAML keys that are fields of Workload, shared by the
// built-in Go kinds, and whether w sets each.
func (w Workload) sharedKeys() map[string]bool {
	return map[string]bool{
		"syscall":     w.Syscall != "",
		"size":        w.Size != 0,
		"threads":     w.Threads != 0,
		"rate":        w.Rate != 0,
		"channel":     w.Channel != "",
		"pairs":       w.Pairs != 0,
		"interval":    w.Interval != 0,
		"priority":    w.Priority != 0,
		"mode":        w.Mode != "",
		"mlock":       w.MLock != nil,
		"dma_latency": w.DMALatency != nil,
		"sleep":       w.Sleep != "",
		"cpus":        w.CPUs != nil,
	}
}

// check validates a workload built in Go rather than parsed. Parse checks
// the same things with positions.
func (w Workload) check() error {
	k, ok := lookupKind(w.Kind)
	if !ok {
		return fmt.Errorf("unknown workload kind %q; allowed: %s", w.Kind, strings.Join(kindNames(), ", "))
	}
	set := w.sharedKeys()
	for _, key := range slices.Sorted(mapKeys(set)) {
		if set[key] && !slices.Contains(k.Keys, key) {
			return fmt.Errorf("%s does not apply to workload kind %s", key, w.Kind)
		}
	}
	if w.Params != nil && k.Parse == nil {
		return fmt.Errorf("workload kind %s has no parameters of its own, got %T", w.Kind, w.Params)
	}
	var errs []error
	if k.Check != nil {
		errs = append(errs, k.Check(w))
	}
	errs = append(errs, checkNoise(w.Noise))
	return firstError(errs)
}

func firstError(errs []error) error {
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

// workloadMetrics names the metrics workload w measures itself.
func workloadMetrics(w Workload) []string {
	k, _ := lookupKind(w.Kind)
	var ms []string
	for _, m := range k.Metrics {
		ms = append(ms, m.Name)
	}
	return ms
}

// tracerWorkload is what the tracers' config parsers know of w.
func tracerWorkload(w Workload) tracing.Workload {
	tw := tracing.Workload{Kind: w.Kind}
	if k, ok := lookupKind(w.Kind); ok && k.Syscalls != nil {
		tw.Syscalls = k.Syscalls(w)
	}
	return tw
}
