package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// Stats is what a workload did in one run.
type Stats struct {
	// Ops is the operations completed: reads or writes, round trips, timer
	// wakeups, children or threads created, hog spin rounds (noise kind);
	// for exec, the lines matching ops, or without ops the runs of command
	// (with load, of load) that ended by themselves within the run.
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
	// Device is the block device the workload wrote, when the device is
	// its own (the fsync kind's device: scratch); nil otherwise.
	Device *result.Device
}

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
	return !ok || k.ThreadsAttributable == nil || k.ThreadsAttributable(w.withDefaults())
}

// Runner drives a prepared workload.
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
// workload is prepared. Each kind keeps its own parameters in a type of
// its own, in Workload.Params, read by its Parse; the placement keys
// (threads, pairs, cpus) and noise are Workload's fields, read by the
// scenario parser for every kind whose Keys name them. To add a kind,
// write its file and add it to workloadKinds (docs/registry.md).
type WorkloadKind struct {
	Name string
	// Internal kinds (attach, what run --pid and --cgroup measure) are not
	// written in scenario files: parsing and error messages leave them out.
	Internal bool
	// HostOnly says why the kind cannot run in a VM guest, "" if it can.
	HostOnly string
	// Whole says why the kind's trial cannot be run in slices, its runs
	// taking turns with another worker's (runner.RunPair), "" if it can:
	// a built-in loop starts and stops its threads at every Run.
	Whole string
	// Keys are the YAML keys the kind takes beside kind and noise, in the
	// order errors name them. The placement keys among them go to
	// Workload's fields; the others are the kind's own, read by Parse.
	Keys []string
	// Parse reads the kind's own keys (those of Keys that are not
	// placement keys), from fs, into the kind's parameters, with errors
	// made by config.Node.Errorf at the key or value at fault; at is the
	// workload key, for what is missing. nil when the kind has no keys of
	// its own.
	Parse func(at config.Node, fs []config.Field) (any, error)
	// DecodeParams reads Params back from the workload's JSON object
	// (the kind's members beside the others); nil when the kind has no
	// parameters.
	DecodeParams func(b []byte) (any, error)
	// Defaults sets w's zero parameters to the kind's defaults, without
	// writing through w's Params (the caller's); nil when there are none.
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
	// Measures names those of Metrics that w measures, when that depends
	// on w's parameters; nil means all of them. w has its defaults.
	Measures func(w Workload) []string
	// Syscalls are the syscalls whose latency is w's operation, the
	// syscall tracer's default; nil for none. w has its defaults.
	Syscalls func(w Workload) []string
	// Serves reports whether w is a server its clients' requests measure
	// (tracing.Workload.Serves); nil means never. w has its defaults.
	Serves func(w Workload) bool
	// ThreadsAttributable reports whether every thread doing w's work is
	// one the workload starts itself (see the function of that name); nil
	// means always. w has its defaults.
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

// placementKeys are the YAML keys that are fields of Workload, beside
// noise, and whether w sets each.
func (w Workload) placementKeys() map[string]bool {
	return map[string]bool{
		"threads": w.Threads != 0,
		"pairs":   w.Pairs != 0,
		"cpus":    w.CPUs != nil,
	}
}

// decodeParams is a WorkloadKind.DecodeParams for parameters of type *P:
// P's members of the workload's JSON object.
func decodeParams[P any](b []byte) (any, error) {
	p := new(P)
	if err := json.Unmarshal(b, p); err != nil {
		return nil, err
	}
	return p, nil
}

// paramsCopy returns a copy of w's Params as a *P, a new P when Params is
// nil, for a kind's Defaults to fill in without writing to the caller's;
// false when Params is of another type, which Check reports.
func paramsCopy[P any](w Workload) (*P, bool) {
	switch p := w.Params.(type) {
	case nil:
		return new(P), true
	case *P:
		c := new(P)
		if p != nil {
			*c = *p
		}
		return c, true
	}
	return nil, false
}

// kindParams returns w's Params as the *P its kind takes, or an error
// that names the type.
func kindParams[P any](w Workload) (*P, error) {
	p, ok := w.Params.(*P)
	if !ok || p == nil {
		return nil, fmt.Errorf("workload kind %s takes its parameters as *%s, got %T", w.Kind, reflect.TypeFor[P]().Name(), w.Params)
	}
	return p, nil
}

// kindLoad is one workload kind, prepared.
type kindLoad interface {
	run(ctx context.Context) (Stats, error)
	// threads is how many threads of the run may be running Go code at
	// once, for sizing GOMAXPROCS.
	threads() int
	close() error
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

// check validates a workload built in Go rather than parsed. Parse checks
// the same things with positions.
func (w Workload) check() error {
	k, ok := lookupKind(w.Kind)
	if !ok {
		return fmt.Errorf("unknown workload kind %q; allowed: %s", w.Kind, strings.Join(kindNames(), ", "))
	}
	set := w.placementKeys()
	for _, key := range slices.Sorted(mapKeys(set)) {
		if set[key] && !slices.Contains(k.Keys, key) {
			return fmt.Errorf("%s does not apply to workload kind %s", key, w.Kind)
		}
	}
	if w.Params != nil && k.DecodeParams == nil {
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

// WorkloadMetrics names the metrics workload w measures itself.
func WorkloadMetrics(w Workload) []string { return workloadMetrics(w) }

func workloadMetrics(w Workload) []string {
	k, _ := lookupKind(w.Kind)
	if k.Measures != nil {
		return k.Measures(w.withDefaults())
	}
	var ms []string
	for _, m := range k.Metrics {
		ms = append(ms, m.Name)
	}
	return ms
}

// tracerWorkload is what the tracers' config parsers know of w.
func tracerWorkload(w Workload) tracing.Workload {
	tw := tracing.Workload{Kind: w.Kind}
	k, ok := lookupKind(w.Kind)
	if ok && k.Syscalls != nil {
		tw.Syscalls = k.Syscalls(w.withDefaults())
	}
	if ok && k.Serves != nil {
		tw.Serves = k.Serves(w.withDefaults())
	}
	return tw
}
