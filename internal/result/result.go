// Package result is the Result document: what one tailgate run measured,
// where, and on what. Histograms are the truth; percentiles are derived and
// stored for readers that do not want to decode buckets.
//
// The schema is documented in docs/result-schema.md. Readers refuse a
// document whose schema is newer than theirs.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"os"
	"slices"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// SchemaVersion is the version of the document this package writes.
const SchemaVersion = 1

// Result is one run: one target, one or more scenarios.
type Result struct {
	Schema      int         `json:"schema"`
	Tailgate    Version     `json:"tailgate"`
	Started     time.Time   `json:"started"`
	Finished    time.Time   `json:"finished"`
	Target      Target      `json:"target"`
	Environment Environment `json:"environment"`
	Scenarios   []Scenario  `json:"scenarios"`
	// Partial is set when the run was interrupted or failed part way: what
	// is here was measured, but some trials are missing.
	Partial bool `json:"partial,omitempty"`
	// Skipped are scenarios the run passed over: a tracer of theirs this
	// kernel cannot load at all (a run of every built-in does that).
	Skipped []Skipped `json:"skipped,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// Skipped is a scenario a run passed over, and why.
type Skipped struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// Version identifies the tailgate that wrote a Result.
type Version struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// Target says where a run happened: the host or a VM.
type Target struct {
	Name    string `json:"name"`             // "host" or the targets-file name
	Kind    string `json:"kind"`             // "host" or "vm"
	Kernel  string `json:"kernel,omitempty"` // the kernel spec for VMs
	Accel   string `json:"accel,omitempty"`  // kvm or tcg for VMs
	VCPUs   int    `json:"vcpus,omitempty"`
	MemMiB  int    `json:"mem_mib,omitempty"`
	Cmdline string `json:"cmdline,omitempty"` // extra kernel cmdline for VMs
	// Clock is a VM's clock: "virtual" (QEMU's instruction counter: the
	// guest's time counts its instructions, 2^IcountShift ns each) or
	// "real". "" for the host, and for VMs of Results written before
	// tailgate recorded it, which ran in real time (ClockOf).
	Clock string `json:"clock,omitempty"`
	// IcountShift is the shift of a VM in virtual time; nil otherwise.
	IcountShift *int `json:"icount_shift,omitempty"`
	// QEMU is the version of the QEMU a VM ran in.
	QEMU string `json:"qemu,omitempty"`
	// Sysctls are a host variant's settings: the value set and the value
	// the kernel read back while the trials ran.
	Sysctls []Sysctl `json:"sysctls,omitempty"`
	// Dir is a host variant's directory (dir=), standing in for the
	// scenario file's: where its exec workloads ran.
	Dir string `json:"dir,omitempty"`
	// Env is what a host variant added to its exec workloads' environment.
	Env map[string]string `json:"env,omitempty"`
}

// Equal reports whether t and o are the same target, settings included.
func (t Target) Equal(o Target) bool {
	return t.Name == o.Name && t.Kind == o.Kind && t.Kernel == o.Kernel && t.Accel == o.Accel &&
		t.VCPUs == o.VCPUs && t.MemMiB == o.MemMiB && t.Cmdline == o.Cmdline && t.Dir == o.Dir &&
		t.ClockOf() == o.ClockOf() && t.Shift() == o.Shift() && t.QEMU == o.QEMU &&
		slices.Equal(t.Sysctls, o.Sysctls) && maps.Equal(t.Env, o.Env)
}

// Clocks a Target ran on.
const (
	ClockVirtual = "virtual"
	ClockReal    = "real"
)

// ClockOf is the clock t ran on: Clock, or ClockReal where it is empty
// (the host, and VMs recorded before the field).
func (t Target) ClockOf() string {
	if t.Clock == "" {
		return ClockReal
	}
	return t.Clock
}

// Virtual says t ran in virtual time: the one reading of the recorded
// clock, so that no reader compares its text.
func (t Target) Virtual() bool { return t.ClockOf() == ClockVirtual }

// Shift is t's icount shift, -1 when it did not run in virtual time.
func (t Target) Shift() int {
	if t.IcountShift == nil {
		return -1
	}
	return *t.IcountShift
}

// Sysctl is one setting of a variant, as set and as read back.
type Sysctl struct {
	Key  string `json:"key"`
	Set  string `json:"set"`
	Read string `json:"read"`
}

// Executable is a program a scenario ran, as it was found: after $PATH and
// the working directory.
type Executable struct {
	// Role is what it was to the workload: command, load, setup,
	// teardown, or the binary a ufunc tracer probed.
	Role   string `json:"role"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	// GitHead is `git rev-parse HEAD` of the working directory when that
	// is a git work tree; GitDirty says its tracked files had changes.
	GitHead  string `json:"git_head,omitempty"`
	GitDirty bool   `json:"git_dirty,omitempty"`
}

// Environment is what was measured about the machine the workload ran on.
type Environment struct {
	KernelRelease string `json:"kernel_release"`
	KernelVersion string `json:"kernel_version"`        // /proc/version
	ConfigHash    string `json:"config_hash,omitempty"` // sha256 of /proc/config.gz's content
	CPUModel      string `json:"cpu_model"`
	CPUs          int    `json:"cpus"`
	Clocksource   string `json:"clocksource,omitempty"`
	Cmdline       string `json:"cmdline,omitempty"` // /proc/cmdline
	Virtualized   string `json:"virtualized,omitempty"`
}

// Scenario is the result of one scenario: its resolved definition and every
// metric's trials.
type Scenario struct {
	Name string `json:"name"`
	// Definition is the resolved scenario (defaults filled in), as JSON, so
	// that compare can refuse runs of different parameters.
	Definition json.RawMessage `json:"definition"`
	// Params is a digest of the parameters that change what is measured
	// (workload, tracers, duration); compare refuses differing digests.
	Params string `json:"params"`
	// Gate is the gate policy the run was made with, resolved: metric (or
	// "*") to percentile to threshold as a fraction. It is the scenario's
	// gate block, or p99 of its primary metrics when it has none. Only
	// what it names is gated; the rest is reported. Results written
	// before the field existed have none (readers fall back to the gate
	// block inside Definition).
	Gate    GatePolicy   `json:"gate,omitempty"`
	Tracers []TracerInfo `json:"tracers,omitempty"`
	// Executables are the programs the workload ran and the tracers
	// probed, identified by content (exec and ufunc scenarios).
	Executables []Executable       `json:"executables,omitempty"`
	Metrics     map[string]*Metric `json:"metrics"`
	Trials      int                `json:"trials"` // trials completed
}

// TracerInfo records how a tracer was attached.
type TracerInfo struct {
	Name    string `json:"name"`
	Variant string `json:"variant"` // tracing.Variant: tp_btf, raw_tp, fentry, kprobe, uprobe
	// Probes are where a uprobe tracer set its entry probes (ufunc).
	Probes []Probe `json:"probes,omitempty"`
	// Hooks are the tracepoints a tracer that chooses among them
	// attached to: the request tracer's sock_recv_length and
	// sock_send_length, or sys_exit. Absent in Results of tailgate
	// before it recorded them.
	Hooks []string `json:"hooks,omitempty"`
}

// Probe is one function's entry uprobe: where it was set and how the
// kernel runs the instruction the breakpoint replaces, which is inside
// every call's measured time.
type Probe struct {
	Symbol string `json:"symbol"`
	// Offset is how far past the function's start the probe is: 4 past
	// a leading endbr64, which is a no-op marker the kernel would
	// otherwise single-step.
	Offset uint64 `json:"offset,omitempty"`
	// Insn is the replaced instruction's first bytes, in hex, and
	// Mnemonic its name when tailgate knows it ("push", "xor").
	Insn     string `json:"insn,omitempty"`
	Mnemonic string `json:"mnemonic,omitempty"`
	// SingleStepped: the kernel cannot emulate the instruction and
	// single-steps a copy of it out of line on every call, two traps
	// whose cost (0.5 to 12 µs by machine) each call's latency includes.
	SingleStepped bool `json:"single_stepped,omitempty"`
}

// Metric is one latency metric over the trials.
type Metric struct {
	Unit   string  `json:"unit"` // always "ns" for now
	Trials []Trial `json:"trials"`
}

// Trial is one trial's distribution of a metric.
type Trial struct {
	Histogram *hist.Histogram `json:"histogram"`
	Summary   Summary         `json:"summary"`
	// TracerCostNs is the mean run time of the tracer's BPF programs per
	// event, from the kernel's BPF statistics (0 for user-space metrics).
	TracerCostNs float64 `json:"tracer_cost_ns,omitempty"`
	// Ops is the number of operations the workload completed in the trial.
	Ops      uint64  `json:"ops"`
	Duration float64 `json:"duration_s"`
	// Where the trial ran, so that a reader can see trials are distinct
	// replicas: the worker process (host) or the boot (VM), and the CPUs
	// its workload threads were pinned to.
	PID    int    `json:"pid,omitempty"`
	BootID string `json:"boot_id,omitempty"`
	CPUs   []int  `json:"cpus,omitempty"`
	// Round is the round of a same-job gate the trial ran in, 1-based,
	// and Slot its place in the round's random order (0 first): base's
	// and head's trials of one round are a pair. 0 for a trial of a plain
	// run or a matrix (whose rounds alternate, not drawn at random).
	Round int `json:"round,omitempty"`
	Slot  int `json:"slot,omitempty"`
	// Seed is the seed of a boot in virtual time (vm.Machine.Seed): what
	// it drew of what a change should not matter to, its guest's
	// layout and its workload's start phase. The same seed gives the
	// same trial; a gate's sides share seed i in round i. 0 for none.
	Seed uint64 `json:"seed,omitempty"`
	// PhaseSeed is the phase seed of a trial restored from its layout's
	// saved state in virtual time (vm.RunPhases): its start phase, drawn
	// apart from its layout (Seed), which trials of one layout share. 0
	// when the trial's start phase came from Seed.
	PhaseSeed uint64 `json:"phase_seed,omitempty"`
	// Slices, when > 0, is how many slices the trial ran in, taking turns
	// with the other side's trial of its round (an interleaved gate);
	// Duration is the slices' sum.
	Slices int `json:"slices,omitempty"`
	// Device is the block device of the workload's own it wrote to; nil
	// for a workload without one.
	Device *Device `json:"device,omitempty"`
	// Slowest are the trial's slowest events of the metric, caught in the
	// kernel, slowest first (at most the scenario's evidence count).
	Slowest []Event `json:"slowest,omitempty"`
	// Missed counts events the metric's tracer lost in the trial (for all
	// its metrics): runs the kernel skipped, per-task state it could not
	// keep. EvidenceDropped counts slow events the evidence ring had no
	// room for.
	Missed          uint64 `json:"missed,omitempty"`
	EvidenceDropped uint64 `json:"evidence_dropped,omitempty"`
	// CPUTime is what the trial's CPUs spent outside the workload while
	// it was measured; nil when it was not read.
	CPUTime *CPUTime `json:"cpu_time,omitempty"`
	// Profile is the stacks sampled on CPU during the trial's requests
	// beyond its gated percentile; nil for a metric whose tracer samples
	// none, or with evidence off.
	Profile *Profile `json:"profile,omitempty"`
}

// Profile is what the workload's tasks were running, sampled on a clock
// every PeriodNs of CPU time, while the trial's requests slower than
// ThresholdNs (the trial's Quantile) were open: Requests of them got a
// sample. Stacks are named where the trial ran, as events' are.
type Profile struct {
	Quantile    float64 `json:"quantile"`
	ThresholdNs uint64  `json:"threshold_ns"`
	PeriodNs    uint64  `json:"period_ns"`
	Requests    int     `json:"requests"`
	// Dropped counts samples the ring had no room for.
	Dropped uint64        `json:"dropped,omitempty"`
	Samples []StackSample `json:"samples,omitempty"`
}

// StackSample is a pair of stacks, innermost first, sampled Count times:
// the kernel's (empty for a sample taken in user space), then the user
// stack it was called from.
type StackSample struct {
	Kernel []string `json:"kernel,omitempty"`
	User   []string `json:"user,omitempty"`
	PID    int      `json:"pid"`
	Count  int      `json:"count"`
}

// CPUTime is a trial's CPU time outside its workload, from /proc/stat
// (in 10 ms ticks) over the CPUs its threads were pinned to (every CPU
// when they were not): the time in hardirqs, in softirqs, stolen by the
// hypervisor, and busy in other tasks (busy time not accounted to the
// trial's process and its reaped children). WindowNs is the trial's wall
// time times its CPUs, what the others are shares of.
type CPUTime struct {
	WindowNs     uint64 `json:"window_ns"`
	OtherTasksNs uint64 `json:"other_tasks_ns"`
	HardirqNs    uint64 `json:"hardirq_ns"`
	SoftirqNs    uint64 `json:"softirq_ns"`
	StealNs      uint64 `json:"steal_ns"`
}

// Event is one slow event: who it happened to, where, and for scheduler
// metrics the task switched out for it. Stacks are symbolized where the
// event happened (a guest with its own kernel's symbols), innermost first.
type Event struct {
	LatencyNs uint64 `json:"latency_ns"`
	// AtNs is CLOCK_MONOTONIC at the event's end, in the machine's clock.
	AtNs        uint64   `json:"at_ns"`
	CPU         int      `json:"cpu"`
	Comm        string   `json:"comm"`
	PID         int      `json:"pid"`
	TID         int      `json:"tid"`
	Other       *Task    `json:"other,omitempty"`
	KernelStack []string `json:"kernel_stack,omitempty"`
	UserStack   []string `json:"user_stack,omitempty"`
	// Interference is what else ran on CPU while the event was open; nil
	// when it was not measured.
	Interference *Interference `json:"interference,omitempty"`
}

// Interference is the time of an event's window [at − latency, at] that
// its CPU spent in hardirq handlers, in softirqs and in tasks other than
// the event's own (idle is none of them), with the largest contributors.
// For an event that slept, the CPU is the one it ended on.
type Interference struct {
	HardirqNs uint64 `json:"hardirq_ns"`
	SoftirqNs uint64 `json:"softirq_ns"`
	TasksNs   uint64 `json:"tasks_ns"`
	// Partial: the window began before the oldest segment the CPU's log
	// held, so only its later part is counted.
	Partial bool `json:"partial,omitempty"`
	// Top are the largest contributors, largest first.
	Top []Contributor `json:"top,omitempty"`
}

// Contributor is one context that ran in an event's window: a hardirq
// handler by action name (local_timer: the local timer interrupt), a
// softirq by vector (net_rx) or a task by comm and tid.
type Contributor struct {
	Kind string `json:"kind"` // hardirq, softirq or task
	Name string `json:"name"`
	TID  int    `json:"tid,omitempty"` // tasks only
	Ns   uint64 `json:"ns"`
}

// Task names a task of an event.
type Task struct {
	Comm string `json:"comm"`
	TID  int    `json:"tid"`
	Prio int    `json:"prio"`
}

// Summary holds the percentiles derived from a histogram, in ns.
type Summary struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

// Summarize derives a Summary from h.
func Summarize(h *hist.Histogram) Summary {
	if h.Count() == 0 {
		return Summary{}
	}
	return Summary{
		Count: h.Count(),
		P50:   h.Quantile(0.5),
		P90:   h.Quantile(0.9),
		P99:   h.Quantile(0.99),
		P999:  h.Quantile(0.999),
		Max:   float64(h.Max()),
	}
}

// Merged returns the merge of all trials' histograms.
func (m *Metric) Merged() *hist.Histogram {
	h := hist.New()
	for _, t := range m.Trials {
		h.Merge(t.Histogram)
	}
	return h
}

// Find returns the scenario of the given name, or nil.
func (r *Result) Find(name string) *Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// Errors a reader can test for.
var (
	ErrFutureSchema = errors.New("result schema is newer than this tailgate")
	ErrCorrupt      = errors.New("result is not a valid tailgate result")
	ErrTooLarge     = errors.New("result is larger than tailgate reads")
)

// The most scenarios and trials a run makes, and so a Result holds: a
// run's scenarios (scenarios.LookupAll) and its trials of each
// (--trials, a scenario file's trials:) stop there, and merge refuses to
// go past them. A Result over them is refused before it is decoded.
const (
	MaxScenarios = 256
	MaxTrials    = 1000
	// MaxMetrics: ten tracers of at most 16 metrics each, and the
	// workload's own.
	MaxMetrics = 256
)

// Caps of a trial's lists, past anything a run makes: its slowest events
// (a scenario's evidence: at most 1000), their stacks' frames (24 caught,
// a few more once inlined functions are named) and its CPUs (Linux's
// NR_CPUS stops at 8192).
const (
	MaxSlowest = 1000
	MaxStack   = 256
	MaxCPUs    = 8192
)

// MaxSize is the largest Result file Load reads, in bytes. A trial's
// histogram takes 75 KB of JSON for a wide real distribution and 233 KB
// with every bucket counted, so a Result of 20 trials of every built-in
// (24 metrics) is 37 MB, 115 MB at worst; 256 MiB leaves room for merged
// shards and more trials while bounding what a bad file costs.
const MaxSize = 256 << 20

// Parse decodes and checks a Result document, whoever wrote it: strictly
// (no unknown field, no key twice, no more scenarios or trials than a run
// makes), and then as check says. It is the one
// reader of every Result tailgate takes: a file, a stored baseline, a
// history record, a guest's reply.
func Parse(b []byte) (*Result, error) {
	var probe struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if probe.Schema == nil {
		return nil, fmt.Errorf("%w: no schema field", ErrCorrupt)
	}
	if *probe.Schema > SchemaVersion {
		return nil, fmt.Errorf("%w: schema %d, this tailgate reads up to %d; upgrade tailgate", ErrFutureSchema, *probe.Schema, SchemaVersion)
	}
	if *probe.Schema < 1 {
		return nil, fmt.Errorf("%w: schema %d", ErrCorrupt, *probe.Schema)
	}
	// Keys first: a document of unknown fields, or of more trials than a
	// run makes, is refused before anything of it is held.
	if err := checkSchema(b); err != nil {
		return nil, err
	}
	if err := checkKeys(b); err != nil {
		return nil, err
	}
	// json.Unmarshal, unlike a Decoder, does not copy b: checkSchema has
	// refused unknown fields already.
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	for _, s := range r.Scenarios {
		for name, m := range s.Metrics {
			if m == nil {
				return nil, fmt.Errorf("%w: scenario %s metric %s is null", ErrCorrupt, s.Name, name)
			}
			for i, t := range m.Trials {
				if t.Histogram == nil {
					return nil, fmt.Errorf("%w: scenario %s metric %s trial %d has no histogram", ErrCorrupt, s.Name, name, i)
				}
			}
			if _, ok := m.total(); !ok {
				return nil, fmt.Errorf("%w: scenario %s metric %s: its trials count more than 2^64 events", ErrCorrupt, s.Name, name)
			}
		}
	}
	if err := check(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// sumCounts adds counts to sum; ok is false when the total overflows.
func sumCounts(sum uint64, counts []uint64) (total uint64, ok bool) {
	for _, c := range counts {
		var carry uint64
		if sum, carry = bits.Add64(sum, c, 0); carry != 0 {
			return 0, false
		}
	}
	return sum, true
}

// total is the number of events over every trial of m; ok is false when it
// does not fit a uint64, so that Merged would wrap.
func (m *Metric) total() (n uint64, ok bool) {
	for _, t := range m.Trials {
		if t.Histogram == nil {
			continue
		}
		if n, ok = sumCounts(n, []uint64{t.Histogram.Count()}); !ok {
			return 0, false
		}
	}
	return n, true
}

// Load reads and parses a Result file.
// A file larger than MaxSize is refused (ErrTooLarge) from its size,
// before it is read.
func Load(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// read reads and parses the Result in f, opened from path: at most
// MaxSize bytes, refused from its size first when f is a regular file.
func read(f *os.File, path string) (*Result, error) {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxSize {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d (256 MiB)", path, ErrTooLarge, st.Size(), MaxSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s: %w: more than %d bytes (256 MiB)", path, ErrTooLarge, MaxSize)
	}
	r, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Marshal encodes r as indented JSON.
func Marshal(r *Result) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
