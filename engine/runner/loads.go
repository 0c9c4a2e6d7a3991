package runner

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Loads keeps the tracers of a target's scenarios loaded, from the first
// trial that needs them until Close, and the running scenario's attached:
// each trial's worker, a fresh process, counts through programs the
// kernel verified once and this process attached, instead of loading and
// attaching them anew. The verifier's time is a kernel's own (seconds a
// program on some builds), and a detach waits for the kernel's RCU grace
// periods (tens of ms on a busy machine): without this every trial paid
// both (BENCHMARKS.md). What the workers share is only code the kernel
// checked; every map is reset to a fresh load's contents as a worker takes
// it, and between workers the programs count no task (tracing.Loaded). A
// Request without Loads loads once per Run or RunPair.
type Loads struct {
	mu    sync.Mutex
	by    map[string]*tracing.Loaded // by scenario, as it runs
	cache *btf.Cache
	// attached is the key of the scenario whose tracers are attached,
	// "" for none: only one scenario's, so that another scenario's
	// programs do not run in this one's trials.
	attached string
	// seq is attachSeq as they attached.
	seq uint64
}

// attachSeq orders the attaches of every Loads: at a hook, the kernel
// runs programs in the order they attached.
var attachSeq atomic.Uint64

// NewLoads returns an empty Loads.
func NewLoads() *Loads {
	return &Loads{by: map[string]*tracing.Loaded{}, cache: btf.NewCache()}
}

// noTask is a tgid no task has: what a parent's tracers count as it
// attaches them, and between its workers.
const noTask = ^uint32(0)

// forScenario returns the tracers of s loaded and attached, loading them
// on first use and detaching the scenario's attached before; nil when s
// needs none, or when loading or attaching failed here: each worker then
// loads its own and reports the failure as a trial's error, classified as
// ever.
func (l *Loads) forScenario(s *scenarios.Scenario) *tracing.Loaded {
	if l == nil || !NeedsBPF(s) {
		return nil
	}
	key, ok := loadKey(s)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.attached != key {
		l.detachLocked()
	}
	objs, ok := l.by[key]
	switch {
	case !ok:
		objs = tracing.NewLoaded()
		l.by[key] = objs
	case objs == nil:
		return nil // it failed to load before
	case l.attached == key:
		return objs
	}
	if err := attachKept(s, l.cache, objs); err != nil {
		_ = objs.Detach() // what attached before the failure
		if !ok {
			objs.Close()
			l.by[key] = nil
		}
		return nil
	}
	l.attached = key
	l.seq = attachSeq.Add(1)
	return objs
}

// attachedAt is attachSeq as s's tracers attached; false when they are
// not attached.
func (l *Loads) attachedAt(s *scenarios.Scenario) (uint64, bool) {
	if l == nil {
		return 0, false
	}
	key, ok := loadKey(s)
	if !ok {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq, l.attached == key
}

// loadKey is what tells a scenario's tracers apart: the scenario whole,
// its settings, paths and programs. false when it cannot be written.
func loadKey(s *scenarios.Scenario) (string, bool) {
	b, err := json.Marshal(s)
	return string(b), err == nil
}

// forScenarioAfter is forScenario with s's tracers attached after prev's
// (attached before this): detached and attached again when they attached
// first. At a hook where both run, the one attached first runs first.
func (l *Loads) forScenarioAfter(s *scenarios.Scenario, prev *Loads) *tracing.Loaded {
	if l != nil && prev != nil && l != prev {
		prev.mu.Lock()
		before := prev.seq
		prev.mu.Unlock()
		l.mu.Lock()
		if l.attached != "" && l.seq < before {
			l.detachLocked()
		}
		l.mu.Unlock()
	}
	return l.forScenario(s)
}

// attachKept loads s's tracers into objs, or takes the ones kept there,
// and attaches them as a worker would, counting no task; closing the
// Tracers leaves them attached with objs.
func attachKept(s *scenarios.Scenario, cache *btf.Cache, objs *tracing.Loaded) error {
	if err := tracing.RemoveMemlock(); err != nil {
		return err
	}
	kb := kernelBTF{cache: cache, loaded: objs}
	opts := tracing.TracerOptions{TGID: noTask, Threads: scenarios.ThreadsAttributable(s.Workload), BTF: cache, Evidence: s.Evidence, Loaded: objs}
	ilog, err := loadInterference(s, kb)
	if err != nil {
		return err
	}
	if ilog != nil {
		defer ilog.Close()
		opts.Interference = ilog.Map()
	}
	ts, err := attachTracers(s, opts)
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.Close()
	}
	return nil
}

// detach detaches the attached scenario's tracers, keeping them loaded.
func (l *Loads) detach() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.detachLocked()
}

// detachLocked is detach with l.mu held.
func (l *Loads) detachLocked() {
	if objs := l.by[l.attached]; objs != nil {
		_ = objs.Detach() // a link that will not close goes with the Close
	}
	l.attached = ""
}

// Close detaches and unloads every tracer kept.
func (l *Loads) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, objs := range l.by {
		objs.Close()
		delete(l.by, key)
	}
}
