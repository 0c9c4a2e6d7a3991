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
//	  syscall.read: {p99: 10%}    # any pN (p95, p99.99) or max; 10% or 0.10
//
// Unknown keys, and keys of another workload kind, are errors. Parse
// documents the defaults.
package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
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
	// ("p50", "p95", "p99.99", any pN, or "max") to threshold as a fraction
	// (0.10 for 10%).
	Gate result.GatePolicy `json:"gate,omitempty"`
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

// Workload is the workload kind and its parameters: the kind's own, in
// Params, and beside them where the workload's measured threads are placed
// and the noise it runs under, which several kinds share.
type Workload struct {
	Kind string `json:"kind"`

	// Threads is the number of measured threads, for the kinds that take
	// threads (syscall, timer, fork, fsync).
	Threads int `json:"threads,omitempty"`
	// Pairs is the number of thread pairs, each with its own channel or
	// connection (pingpong, tcp-rr).
	Pairs int `json:"pairs,omitempty"`
	// CPUs are the CPUs the measured threads (syscall, pingpong, timer)
	// are pinned to, thread i to CPUs[(i+offset) mod len], as cyclictest
	// -a does (an isolated CPU, say); nil is the default: each trial pins
	// them to CPUs chosen anew among all the process may run on. In YAML a
	// CPU list as taskset -c and isolcpus= write it ("1", "0,2", "2-3").
	CPUs []int `json:"cpus,omitempty"`

	// Noise adds background CPU hogs to any workload: the number of hog
	// threads (0 = none), or NoiseNumCPU for one per CPU of the machine that
	// runs it. The noise kind is hogs alone.
	Noise int `json:"noise,omitempty"`

	// Params are the kind's own parameters, as its WorkloadKind.Parse
	// makes them: *Syscall, *Pingpong, *Timer, *Fork, *Exec, *TCPRR,
	// *Fsync or *Attach; nil for the noise kind, and where the defaults
	// are meant (NewWorkload fills them in). In JSON they are members of
	// the workload object (see MarshalJSON).
	Params any `json:"-"`
}

// workloadFields is Workload without its methods and Params, for
// encoding/json.
type workloadFields struct {
	Kind    string `json:"kind"`
	Threads int    `json:"threads,omitempty"`
	Pairs   int    `json:"pairs,omitempty"`
	CPUs    []int  `json:"cpus,omitempty"`
	Noise   int    `json:"noise,omitempty"`
}

// workloadJSONOrder is the order of the workload object's members that
// precede the rest: that of the one struct the first five kinds once
// shared, so that every workload encodes, and its scenario's digest
// (Params) hashes, as before the kinds had parameter types of their own.
// Members of Params not named here follow, in the order Params marshals
// them.
var workloadJSONOrder = []string{"kind", "syscall", "size", "threads", "rate", "channel", "pairs", "interval",
	"priority", "mlock", "dma_latency", "sleep", "cpus", "mode", "noise"}

// MarshalJSON writes one object: kind, the placement fields, noise and the
// members of Params, in workloadJSONOrder.
func (w Workload) MarshalJSON() ([]byte, error) {
	ms, err := jsonMembers(workloadFields{w.Kind, w.Threads, w.Pairs, w.CPUs, w.Noise})
	if err != nil {
		return nil, err
	}
	if w.Params != nil {
		pb, err := json.Marshal(w.Params)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Kind, err)
		}
		pb = bytes.TrimSpace(pb)
		if len(pb) < 2 || pb[0] != '{' {
			return nil, fmt.Errorf("workload %s: parameters marshal to %.20s, not an object", w.Kind, pb)
		}
		pms, err := jsonMembers(json.RawMessage(pb))
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Kind, err)
		}
		for _, m := range pms {
			if slices.ContainsFunc(ms, func(o jsonMember) bool { return o.key == m.key }) {
				return nil, fmt.Errorf("workload %s: parameters marshal %q, a member of the workload's own", w.Kind, m.key)
			}
		}
		ms = append(ms, pms...)
	}
	rank := func(m jsonMember) int {
		if i := slices.Index(workloadJSONOrder, m.key); i >= 0 {
			return i
		}
		return len(workloadJSONOrder)
	}
	slices.SortStableFunc(ms, func(a, b jsonMember) int { return rank(a) - rank(b) })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonMember is a member of a JSON object, its value as encoded.
type jsonMember struct {
	key   string
	value json.RawMessage
}

// jsonMembers returns the members of the object v marshals to, in order.
func jsonMembers(v any) ([]jsonMember, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%.20s is not a JSON object", b)
	}
	var ms []jsonMember
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var m jsonMember
		m.key, _ = t.(string)
		if err := d.Decode(&m.value); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// UnmarshalJSON reads the fields, then Params with the kind's
// DecodeParams.
func (w *Workload) UnmarshalJSON(b []byte) error {
	var f workloadFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*w = Workload{Kind: f.Kind, Threads: f.Threads, Pairs: f.Pairs, CPUs: f.CPUs, Noise: f.Noise}
	if k, ok := lookupKind(w.Kind); ok && k.DecodeParams != nil {
		p, err := k.DecodeParams(b)
		if err != nil {
			return fmt.Errorf("workload %s: %w", w.Kind, err)
		}
		w.Params = p
	}
	return nil
}

// DMALatencyLeave as Timer.DMALatency leaves /dev/cpu_dma_latency
// alone.
const DMALatencyLeave = -1

// The timer's ways to sleep (Timer.Sleep).
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
