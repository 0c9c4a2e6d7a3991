package tracing

import (
	"encoding/json"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Kind is a tracer as the registry (bpf/tracers) knows it: its name,
// the config it takes under tracers.<name> in a scenario file, the metrics
// that config produces and how to load it. Each tracer package under bpf/
// declares one, as its Tracer variable; nothing outside the tracer package
// and the registry names a tracer.
type Kind struct {
	// Name is the key under tracers: in a scenario, the tracer's name in
	// the Result and, by convention, its metrics' prefix.
	Name string
	// Description says in a few words what the tracer measures, for
	// tailgate list.
	Description string
	// Metrics shows the metrics for tailgate list: names, or patterns such
	// as "syscall.<name>" where the config picks them.
	Metrics []string
	// Background marks a tracer whose metrics describe the conditions of
	// a measurement rather than the measurement (sched.runq beside
	// syscall.read): its primary metrics are gated by default only when no
	// other tracer of the scenario has primary metrics.
	Background bool
	// HostOnly says why the tracer cannot run in a VM guest, "" if it
	// can.
	HostOnly string
	// Parse reads the tracer's config from its entry under tracers: (the
	// value is a null node for "sched:"). It refuses unknown keys and bad
	// values with an error made by config.Node.Errorf at the key or value
	// at fault, so that the user sees file:line:column.
	Parse func(f config.Field, w Workload) (Config, error)
	// Decode reads a config back from its JSON (as a Result's definition
	// and a trial worker's request carry it); see DecodeJSON.
	Decode func(b []byte) (Config, error)
	// New loads and attaches the tracer for a config Parse or Decode
	// returned.
	New func(c Config, o TracerOptions) (*Tracer, error)
	// Probe is a small config that tailgate doctor loads the tracer with to
	// tell whether it works on this kernel.
	Probe Config
	// Values lists, by config key, the values the key takes, for
	// "tailgate list KEY" (syscalls: the syscall names); nil when none.
	Values map[string]func() []string
	// Objects returns the tracer's BPF objects, whose types are the part
	// of a kernel's BTF a guest gets (internal/kerneltypes).
	Objects func() ([]*ebpf.CollectionSpec, error)
	// Default, when set, returns the tracer's config for a scenario that
	// names no tracers, or nil when its workload is none the tracer
	// measures by default (the request tracer's: a workload that serves).
	Default func(w Workload) Config
	// OptionalTracepoints are the tracepoints the tracer attaches to only
	// where the kernel has them, found by the typedefs of their BTF
	// (btf_trace_NAME), which a cut of a kernel's BTF must keep.
	OptionalTracepoints []string

	// Binaries, for a tracer that probes programs of this host (ufunc),
	// returns the paths of those c probes, which a Result records; nil
	// for a tracer that probes none.
	Binaries func(c Config) []string
	// MoveBinaries, set with Binaries, returns a copy of c that probes
	// move(path) for each path of its Binaries: a variant's dir= runs the
	// same tree checked out elsewhere.
	MoveBinaries func(c Config, move func(path string) string) Config

	// Interference, on the entry that offers it (bpf/interfere, which no
	// scenario names), loads and attaches the log of what runs on each
	// CPU, which the evidence of every tracer walks
	// (TracerOptions.Interference). Of o it takes BTF, KernelTypes,
	// Loaded and VerifierStats.
	Interference func(o TracerOptions) (InterferenceLog, error)
}

// Config is a tracer's parsed config. It marshals to JSON as the scenario
// records it in a Result, and Kind.Decode reads that back.
type Config interface {
	// Metrics names the metrics the tracer produces under this config, in
	// a fixed order: exactly the keys of what Tracer.Read returns.
	Metrics() []string
	// Primary names those of Metrics that a scenario without a gate block
	// gates (see Kind.Background).
	Primary() []string
}

// Workload is what a tracer's Parse may take defaults from: the scenario's
// workload, as its kind describes it.
type Workload struct {
	Kind string
	// Syscalls are the syscalls whose latency is the workload's operation
	// (read for a syscall workload reading), or none.
	Syscalls []string
	// Serves says the workload is a server its scenario waits for on a
	// port (an exec workload with a ready port): its requests are its
	// operation.
	Serves bool
}

// TracerOptions are what every tracer's constructor takes beside its
// config: which tasks to count, the shared kernel BTF and the evidence.
// Each tracer's Options embeds them, and Options (for Load) does too, so
// an option every tracer gets is declared here, set by the runner and
// used by Load: no tracer package names it.
type TracerOptions struct {
	// TGID is the process whose tasks (and forked children) are counted.
	TGID uint32
	// Threads counts, in TGID, only the threads added with AddThread and
	// the threads and processes they create.
	Threads bool
	// CgroupID, when not 0, counts the tasks of this cgroup v2 group (and
	// of the groups below it) instead of TGID's.
	CgroupID uint64
	// BTF, when set, shares the decoded kernel BTF between loads: decoding
	// it is most of a load's time (about 50 ms here, seconds under TCG).
	// nil decodes it anew.
	BTF *btf.Cache
	// KernelTypes, when set, are the kernel's types the CO-RE relocations
	// use instead of its whole BTF: the part of it tailgate's objects
	// relocate against, cut on the host for a guest (internal/kerneltypes).
	// With them a tracer attaches raw_tp, unless Options.Variant says
	// otherwise: finding a tp_btf program's attach point takes the
	// kernel's own BTF.
	KernelTypes *btf.Spec
	// Evidence is how many of each metric's slowest events to keep per
	// trial (see Evidence), for tracers built with evidence.bpf.h; 0 is
	// off.
	Evidence int
	// Interference, with Evidence, is bpf/interfere's log: each event
	// kept then carries what else ran on its CPU while it was open. nil is
	// none.
	Interference *ebpf.Map
	// Loaded, when set, keeps the tracer's loaded programs and maps, or
	// has them already: loaded and verified once, attached by every trial
	// (see Loaded). nil loads anew.
	Loaded *Loaded
	// VerifierStats loads the programs with the verifier's statistics
	// log, so that Tracer.LoadCost has each program's verification time
	// (its instructions it has without).
	VerifierStats bool
}

// AllTasks returns o without its choice of tasks (TGID, Threads,
// CgroupID), for a tracer that counts the events of every task on the
// CPUs it watches (irq, softirq): they are conditions of the measurement,
// whoever they interrupt.
func (o TracerOptions) AllTasks() TracerOptions {
	o.TGID, o.Threads, o.CgroupID = 0, false, 0
	return o
}

// DecodeJSON is a Kind.Decode for a config type C whose pointer is the
// Config: it unmarshals b into a new C.
func DecodeJSON[C any, P interface {
	*C
	Config
}](b []byte) (Config, error) {
	var c C
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return P(&c), nil
}

// Objects calls each of loads (an object's bpf2go loader) for a
// Kind.Objects.
func Objects(loads ...func() (*ebpf.CollectionSpec, error)) ([]*ebpf.CollectionSpec, error) {
	var specs []*ebpf.CollectionSpec
	for _, load := range loads {
		s, err := load()
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// NoOptions completes k, the registry entry of a tracer that takes no
// options (written "<name>: {}" in a scenario) and whose config is a *C:
// its Parse refuses every key, and Decode and Probe give a new C. k keeps
// what is the tracer's own, New included.
func NoOptions[C any, P interface {
	*C
	Config
}](k Kind) Kind {
	k.Parse = func(f config.Field, _ Workload) (Config, error) {
		what := "tracers." + k.Name
		fs, err := f.Value.Fields(what, nil)
		if err != nil {
			return nil, err
		}
		if len(fs) > 0 {
			return nil, fs[0].KeyAt.Errorf("unknown key %q in %s; the %s tracer has no options: write %s: {}", fs[0].Key, what, k.Name, k.Name)
		}
		return P(new(C)), nil
	}
	k.Decode = DecodeJSON[C, P]
	k.Probe = P(new(C))
	return k
}
