package runner

import (
	"encoding/json"
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Loads keeps the tracers of a target's scenarios loaded, from the first
// trial that needs them until Close: each trial's worker, a fresh
// process, attaches programs the kernel verified once instead of loading
// them anew. The verifier's time is a kernel's own (seconds a program on
// some builds, see BENCHMARKS.md), so without this every trial paid it.
// What the workers share is only code the kernel checked; every map is
// reset to a fresh load's contents as a worker takes it (tracing.Loaded).
// A Request without Loads loads once per Run or RunPair.
type Loads struct {
	mu    sync.Mutex
	by    map[string]*tracing.Loaded // by scenario, as it runs
	cache *btf.Cache
}

// NewLoads returns an empty Loads.
func NewLoads() *Loads {
	return &Loads{by: map[string]*tracing.Loaded{}, cache: btf.NewCache()}
}

// noTask is a tgid no task has: what a parent's tracers count while it
// loads and attaches them once to see that they attach.
const noTask = ^uint32(0)

// forScenario returns the tracers of s loaded, loading them on first use;
// nil when s needs none, or when loading failed here: each worker then
// loads its own and reports the failure as a trial's error, classified as
// ever.
func (l *Loads) forScenario(s *scenarios.Scenario) *tracing.Loaded {
	if l == nil || !NeedsBPF(s) {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	key := string(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if objs, ok := l.by[key]; ok {
		return objs
	}
	objs, err := preload(s, l.cache)
	if err != nil {
		objs = nil
	}
	l.by[key] = objs
	return objs
}

// preload loads and attaches s's tracers as a worker would, counting no
// task, detaches them and keeps what was loaded.
func preload(s *scenarios.Scenario, cache *btf.Cache) (*tracing.Loaded, error) {
	if err := tracing.RemoveMemlock(); err != nil {
		return nil, err
	}
	objs := tracing.NewLoaded()
	kb := kernelBTF{cache: cache, loaded: objs}
	opts := tracing.TracerOptions{TGID: noTask, Threads: scenarios.ThreadsAttributable(s.Workload), BTF: cache, Evidence: s.Evidence, Loaded: objs}
	ilog, err := loadInterference(s, kb)
	if err != nil {
		objs.Close()
		return nil, err
	}
	if ilog != nil {
		defer ilog.Close()
		opts.Interference = ilog.Map()
	}
	ts, err := attachTracers(s, opts)
	if err != nil {
		objs.Close()
		return nil, err
	}
	for _, t := range ts {
		t.Close()
	}
	return objs, nil
}

// Close unloads every tracer kept.
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
