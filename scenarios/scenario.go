// Package scenarios holds the scenario model, its strict YAML parser, the
// built-in scenarios (embedded) and the workloads that generate events.
//
// A scenario file:
//
//	name: syscall-read            # [a-z0-9-]+
//	description: read(2) of 4 KiB from /dev/zero
//	workload:
//	  kind: syscall               # syscall, pingpong, timer, fork, noise
//	  syscall: read               # syscall: read, write, getppid
//	  size: 4096                  # syscall read/write: bytes per call
//	  threads: 1                  # syscall, timer, fork
//	  rate: 0                     # syscall: calls/s per thread; 0 = closed loop
//	  noise: 0                    # any kind: CPU hogs, a number or ncpu
//	  # pingpong: channel (pipe, eventfd, futex), pairs
//	  # timer: interval (1ms), priority (SCHED_FIFO 1-99; 0 = SCHED_OTHER)
//	  # fork: mode (fork, thread)
//	tracers:
//	  syscall: {syscalls: [read]} # names from SyscallNumbers
//	  sched: {}
//	trials: 20
//	warmup: 100ms
//	duration: 500ms
//	gate:                         # metric or "*": percentile: threshold
//	  syscall.read: {p99: 10%}    # p50, p90, p99, p99.9, max; 10% or 0.10
//
// Unknown keys, and keys of another workload kind, are errors. Parse
// documents the defaults.
package scenarios

import "time"

// Scenario is a resolved scenario: parsed, validated, defaults filled in.
type Scenario struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Workload    Workload      `json:"workload"`
	Tracers     Tracers       `json:"tracers"`
	Trials      int           `json:"trials"`
	Warmup      time.Duration `json:"warmup"`
	Duration    time.Duration `json:"duration"`
	// Gate maps a metric name (or "*" for every metric) to percentile
	// ("p50", "p90", "p99", "p99.9", "max") to threshold as a fraction
	// (0.10 for 10%).
	Gate map[string]map[string]float64 `json:"gate,omitempty"`
	// Source is where the scenario came from: "builtin:NAME.yaml" or a path.
	Source string `json:"source"`
}

// Tracers configures the tracers a scenario attaches. A nil field means the
// tracer is not attached.
type Tracers struct {
	Syscall *SyscallTracer `json:"syscall,omitempty"`
	Sched   *SchedTracer   `json:"sched,omitempty"`
}

// SyscallTracer configures the syscall tracer.
type SyscallTracer struct {
	Syscalls []string `json:"syscalls"` // names, e.g. "read"; metric syscall.<name>
}

// SchedTracer configures the scheduler tracer (no options yet).
type SchedTracer struct{}

// Workload is the workload kind and its parameters; only the fields of the
// kind are meaningful.
type Workload struct {
	Kind string `json:"kind"` // syscall, pingpong, timer, fork, noise

	// syscall
	Syscall string `json:"syscall,omitempty"` // read, write, getppid
	Size    int    `json:"size,omitempty"`    // bytes per read/write
	// Threads is the number of workload threads (syscall, timer, fork).
	Threads int `json:"threads,omitempty"`
	// Rate is operations per second per thread; 0 is a closed loop.
	Rate float64 `json:"rate,omitempty"`

	// pingpong
	Channel string `json:"channel,omitempty"` // pipe, eventfd, futex
	// Pairs is the number of ping-pong thread pairs, each with its own
	// channel.
	Pairs int `json:"pairs,omitempty"`

	// timer
	Interval time.Duration `json:"interval,omitempty"`
	Priority int           `json:"priority,omitempty"` // SCHED_FIFO priority; 0 = SCHED_OTHER

	// fork
	Mode string `json:"mode,omitempty"` // fork (fork+exit) or thread (clone+exit)

	// Noise adds background CPU hogs to any workload: the number of hog
	// threads (0 = none), or NoiseNumCPU for one per CPU of the machine that
	// runs it. The noise kind is hogs alone.
	Noise int `json:"noise,omitempty"`
}

// NoiseNumCPU as Workload.Noise asks for one hog per CPU (written "ncpu" in
// YAML). It is resolved when the workload runs, not when it is parsed, so a
// scenario means the same thing on a 2-vCPU guest and a 64-core host.
const NoiseNumCPU = -1

// Defaults filled in by Parse (and by NewWorkload for fields left zero).
const (
	// Many short trials, each a fresh process, beat a few long ones: the
	// interval's width is set by the spread between processes, which only
	// more trials shrink (BENCHMARKS.md, "Trial count and length").
	DefaultTrials   = 20
	DefaultWarmup   = 100 * time.Millisecond
	DefaultDuration = 500 * time.Millisecond
	DefaultSyscall  = "read"           // syscall workload
	DefaultSize     = 4096             // bytes per read or write
	DefaultThreads  = 1                // syscall, timer and fork threads
	DefaultChannel  = "pipe"           // pingpong
	DefaultPairs    = 1                // pingpong
	DefaultInterval = time.Millisecond // timer
	DefaultMode     = "fork"           // fork
	// The noise kind defaults to NoiseNumCPU hogs; other kinds to none.
)
