// Package scenarios holds the scenario model, its strict YAML parser, the
// built-in scenarios (embedded) and the workloads that generate events.
//
// A scenario file:
//
//	name: syscall-read            # [a-z0-9-]+
//	description: read(2) of 4 KiB from /dev/zero
//	workload:
//	  kind: syscall               # syscall, pingpong, timer, fork, noise (workloadKinds)
//	  syscall: read               # syscall: read, write, getppid
//	  size: 4096                  # syscall read/write: bytes per call
//	  threads: 1                  # syscall, timer, fork
//	  rate: 0                     # syscall: calls/s per thread; 0 = closed loop
//	  noise: 0                    # any kind: CPU hogs, a number or ncpu
//	  # pingpong: channel (pipe, eventfd, futex), pairs
//	  # timer: interval (1ms), priority (SCHED_FIFO 1-99; 0 = SCHED_OTHER)
//	  # syscall, pingpong, timer: cpus (a CPU list) pins the measured threads
//	  # fork: mode (fork, thread)
//	tracers:                      # see tailgate list; bpf/tracers
//	  syscall: {syscalls: [read]} # names: tailgate list syscalls
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

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// Scenario is a resolved scenario: parsed, validated, defaults filled in.
type Scenario struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Workload    Workload      `json:"workload"`
	Tracers     Tracers       `json:"tracers"`
	Trials      int           `json:"trials"`
	Warmup      time.Duration `json:"warmup"`
	Duration    time.Duration `json:"duration"`
	// Evidence is how many of each metric's slowest events every trial
	// keeps, caught in the kernel with stacks (0: none). It does not enter
	// Params: runs with and without evidence compare.
	Evidence int `json:"evidence"`
	// Gate maps a metric name (or "*" for every metric) to percentile
	// ("p50", "p90", "p99", "p99.9", "max") to threshold as a fraction
	// (0.10 for 10%).
	Gate map[string]map[string]float64 `json:"gate,omitempty"`
	// Source is where the scenario came from: "builtin:NAME.yaml" or a path.
	Source string `json:"source"`
}

// Tracers configures the tracers a scenario attaches, by tracer name (the
// names of bpf/tracers); a tracer not named is not attached. Each
// config is the type its tracer's Parse returns, e.g. *syscalls.Config.
type Tracers map[string]tracing.Config

// MarshalJSON writes the configs in the registry's order, as the Result
// has always recorded them.
func (t Tracers) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	n := 0
	for _, k := range tracers.All {
		c, ok := t[k.Name]
		if !ok || c == nil {
			continue
		}
		cb, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("tracer %s: %w", k.Name, err)
		}
		if n > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(k.Name)
		b = append(append(append(b, name...), ':'), cb...)
		n++
	}
	if n != len(t) {
		for name := range t {
			if _, ok := tracers.Lookup(name); !ok {
				return nil, fmt.Errorf("unknown tracer %q", name)
			}
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads each config with its tracer's Decode.
func (t *Tracers) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = nil
	for name, rb := range raw {
		if string(rb) == "null" {
			continue
		}
		k, ok := tracers.Lookup(name)
		if !ok {
			return fmt.Errorf("unknown tracer %q; known: %s", name, strings.Join(tracers.Names(), ", "))
		}
		c, err := k.Decode(rb)
		if err != nil {
			return fmt.Errorf("tracer %s: %w", name, err)
		}
		if *t == nil {
			*t = Tracers{}
		}
		(*t)[name] = c
	}
	return nil
}

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
	// MLock locks the worker's memory for the run
	// (mlockall(MCL_CURRENT|MCL_FUTURE)), as cyclictest -m does; nil is
	// the default, true.
	MLock *bool `json:"mlock,omitempty"`
	// DMALatency is held in /dev/cpu_dma_latency, in µs, while the
	// workload is prepared, as cyclictest does; DMALatencyLeave leaves the
	// file alone. nil is the default, 0: no idle state with an exit
	// latency.
	DMALatency *int `json:"dma_latency,omitempty"`
	// Sleep is how the timer's threads sleep: TimerSleepRaw or
	// TimerSleepRuntime; "" is the default, DefaultTimerSleep.
	Sleep string `json:"sleep,omitempty"`
	// CPUs are the CPUs the measured threads (syscall, pingpong, timer)
	// are pinned to, thread i to CPUs[(i+offset) mod len], as cyclictest
	// -a does (an isolated CPU, say); nil is the default: each trial pins
	// them to CPUs chosen anew among all the process may run on. In YAML a
	// CPU list as taskset -c and isolcpus= write it ("1", "0,2", "2-3").
	CPUs []int `json:"cpus,omitempty"`

	// fork
	Mode string `json:"mode,omitempty"` // fork (fork+exit) or thread (clone+exit)

	// Noise adds background CPU hogs to any workload: the number of hog
	// threads (0 = none), or NoiseNumCPU for one per CPU of the machine that
	// runs it. The noise kind is hogs alone.
	Noise int `json:"noise,omitempty"`

	// Params are the parameters of a kind with keys of its own, as its
	// WorkloadKind.Parse made them; nil for the built-in kinds. In JSON
	// they are members of the workload object, after the fields above.
	Params any `json:"-"`
}

// workloadFields is Workload without its methods, for encoding/json.
type workloadFields Workload

// MarshalJSON writes the fields, then the members of Params.
func (w Workload) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(workloadFields(w))
	if err != nil || w.Params == nil {
		return b, err
	}
	pb, err := json.Marshal(w.Params)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Kind, err)
	}
	pb = bytes.TrimSpace(pb)
	if len(pb) < 2 || pb[0] != '{' {
		return nil, fmt.Errorf("workload %s: parameters marshal to %.20s, not an object", w.Kind, pb)
	}
	if string(pb) == "{}" {
		return b, nil
	}
	// b ends in '}' and holds at least "kind".
	return append(append(b[:len(b)-1], ','), pb[1:]...), nil
}

// UnmarshalJSON reads the fields, then Params with the kind's
// DecodeParams.
func (w *Workload) UnmarshalJSON(b []byte) error {
	var f workloadFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*w = Workload(f)
	if k, ok := lookupKind(w.Kind); ok && k.DecodeParams != nil {
		p, err := k.DecodeParams(b)
		if err != nil {
			return fmt.Errorf("workload %s: %w", w.Kind, err)
		}
		w.Params = p
	}
	return nil
}

// DMALatencyLeave as Workload.DMALatency leaves /dev/cpu_dma_latency
// alone.
const DMALatencyLeave = -1

// The timer's ways to sleep (Workload.Sleep).
const (
	// TimerSleepRaw calls clock_nanosleep straight into the kernel, as a C
	// program does, without the Go runtime's syscall path: the thread
	// keeps its P while it sleeps and has nothing of the runtime's to do
	// between its wakeup and its reading of the clock.
	TimerSleepRaw = "raw"
	// TimerSleepRuntime calls clock_nanosleep through the runtime's
	// syscall path (entersyscall, exitsyscall), as Go code does.
	TimerSleepRuntime = "runtime"
)

// NoiseNumCPU as Workload.Noise asks for one hog per CPU (written "ncpu" in
// YAML). It is resolved when the workload runs, not when it is parsed, so a
// scenario means the same thing on a 2-vCPU guest and a 64-core host.
const NoiseNumCPU = -1

// Defaults filled in by Parse (and by NewWorkload for fields left zero).
const (
	// Many short trials, each a fresh process, beat a few long ones: the
	// interval's width is set by the spread between processes, which only
	// more trials shrink (BENCHMARKS.md, "Trial count and length").
	DefaultTrials = 20
	DefaultWarmup = 100 * time.Millisecond
	// DefaultEvidence is how many slowest events per metric and trial a
	// scenario keeps when it does not say.
	DefaultEvidence = 10
	DefaultDuration = 500 * time.Millisecond
	DefaultSyscall  = "read"           // syscall workload
	DefaultSize     = 4096             // bytes per read or write
	DefaultThreads  = 1                // syscall, timer and fork threads
	DefaultChannel  = "pipe"           // pingpong
	DefaultPairs    = 1                // pingpong
	DefaultInterval = time.Millisecond // timer
	DefaultMode     = "fork"           // fork
	// The timer holds memory locked and /dev/cpu_dma_latency at 0, as
	// cyclictest does by default.
	DefaultMLock      = true
	DefaultDMALatency = 0
	// The timer sleeps as cyclictest does, straight into the kernel: its
	// p50 then reads as cyclictest's (BENCHMARKS.md, "Timer workload
	// against cyclictest").
	DefaultTimerSleep = TimerSleepRaw
	// The noise kind defaults to NoiseNumCPU hogs; other kinds to none.
)
