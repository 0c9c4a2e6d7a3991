// Package runner runs scenarios on the running kernel: it attaches the
// scenario's tracers, drives its workload for warmup and trials, and collects
// each trial's histograms into a Result. The host and the guest inside a VM
// run the same code.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/internal/version"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Request is what to run.
type Request struct {
	Scenarios []*scenarios.Scenario
	Trials    int           // overrides each scenario's trials when > 0
	Duration  time.Duration // overrides each scenario's duration when > 0
	Warmup    time.Duration // overrides each scenario's warmup when WarmupSet
	WarmupSet bool
	Target    result.Target
	// InProcess runs every trial in this process instead of each in a
	// fresh worker process. The guest inside a VM sets it: there each
	// trial is a boot of its own.
	InProcess bool
	// KernelText, when set, is the kernel's own text, whose stack frames
	// are left as hex for the host to name from its System.map (a guest's
	// run: see symbols.Symbolizer.LeaveCore and NameGuestFrames).
	KernelText symbols.TextRange
	// KernelTypes, when set, are the part of the kernel's BTF the tracers
	// relocate against instead of the whole (a guest's, cut on the host:
	// internal/kerneltypes). Only for in-process runs.
	KernelTypes *btf.Spec `json:"-"`
	// SkipUnsupported passes over, with a note in the Result, a scenario
	// a tracer of which this kernel cannot load at all (kfunc without
	// fentry or kprobes), as a run of every built-in does.
	SkipUnsupported bool `json:"skip_unsupported,omitempty"`
	// Exe is the program to start as a trial worker; "" means this
	// program (os.Executable).
	Exe string
	// CPUOffset, when set, is where every worker's thread pinning starts
	// (the CPUs rotate by it) instead of an offset drawn per trial: a
	// same-job gate gives base and head of one round the same CPUs, so
	// that a difference between CPUs is not a difference between them.
	CPUOffset *int `json:"-"`
	// Progress receives progress events; nil means none.
	Progress func(Event)
	// SliceHook, when set, is called in a RunPair as the request's side
	// starts to run (true) and stops (false): its warmup, then each run
	// of its slices (one slice, or two back to back: A B B A A B ...).
	// An error it returns ends the pair; it is called with false after
	// every true, whatever happened.
	SliceHook func(running bool) error `json:"-"`
	// Seed is the seed of the request's first trial where trials are
	// seeded (a VM in virtual time, vm.Machine.Seed): trial k gets
	// Seed+k-1, and 0 is 1. A gate's rounds give round r seed r on every
	// side, so that its sides share their seeds (common random numbers).
	Seed uint64 `json:"-"`
	// Loads, when set, keeps the tracers loaded across this request's
	// trials and beyond, until its owner closes it (a gate's rounds), and
	// the running scenario's attached until the Run ends, or, for a
	// RunPair, whose two sides' tracers are attached at once, until the
	// next scenario or the Close; nil loads them once per Run or RunPair.
	Loads *Loads `json:"-"`
	// Ready, when set, is called once in an in-process run, when the
	// first scenario that attaches has its tracers attached and its
	// workload made, before its warmup: a guest's checkpoint
	// (vm.Checkpoint), from where each of its trials may resume. An error
	// it returns ends the run.
	Ready func(context.Context) error `json:"-"`
}

// Event is one step of progress.
type Event struct {
	Scenario string
	Index    int // 1-based index of the scenario in the request
	Count    int // scenarios in the request
	Trial    int // 1-based; 0 while attaching or warming up
	Trials   int
	Phase    Phase
	// Measured is what a finished trial measured (Phase Trial); nil
	// while the trial runs.
	Measured *Measured
	// Detail says why a scenario was skipped (Phase Skipped).
	Detail string
}

// Measured is what a finished trial measured, for progress: the
// workload's operations, how long it ran, and each metric's events.
type Measured struct {
	Ops     uint64
	Elapsed time.Duration
	Events  map[string]uint64
}

// Measure is what the last trial of sr measured, its workload's ops and
// time from its metrics' last trial.
func Measure(sr *result.Scenario) *Measured {
	m := &Measured{Events: events(sr)}
	for _, met := range sr.Metrics {
		if len(met.Trials) > 0 {
			tr := met.Trials[len(met.Trials)-1]
			m.Ops, m.Elapsed = tr.Ops, time.Duration(tr.Duration*float64(time.Second))
			break
		}
	}
	return m
}

// Text says what m measured: "5182 ops in 0.2s; tcp.rr n=1234", the
// events of metrics in their order, or of every metric by name when
// metrics is nil. A metric m has no count of is left out.
func (m *Measured) Text(metrics []string) string {
	out := fmt.Sprintf("%d ops in %.1fs", m.Ops, m.Elapsed.Seconds())
	if m.Ops == 0 {
		out = fmt.Sprintf("%.1fs", m.Elapsed.Seconds())
	}
	if metrics == nil {
		metrics = slices.Sorted(maps.Keys(m.Events))
	}
	for _, n := range metrics {
		if c, ok := m.Events[n]; ok {
			out += fmt.Sprintf("; %s n=%d", n, c)
		}
	}
	return out
}

// Phase is the step of a scenario an Event reports.
type Phase string

// Phases, in the order a scenario goes through them.
const (
	PhaseAttach  Phase = "attach"  // loading and attaching the tracers
	PhaseWarmup  Phase = "warmup"  // the scenario's warmup, not measured
	PhaseTrial   Phase = "trial"   // a trial started (Measured nil) or finished
	PhaseDone    Phase = "done"    // every trial of the scenario ran
	PhaseSkipped Phase = "skipped" // the kernel cannot trace it (SkipUnsupported)
)

// ErrPrivileges reports that tracers cannot be loaded for lack of privileges.
var ErrPrivileges = tracing.ErrPrivileges

// VerifierError is a tracer program the verifier rejected.
type VerifierError = tracing.VerifierError

// AttachError is a tracer that could not be loaded or attached: an
// infrastructure failure, not a measurement.
type AttachError struct {
	Tracer string
	Err    error
	// BadTarget: what the scenario names to trace does not exist (a
	// function, a symbol, a binary): bad input. Unsupported: the kernel
	// cannot load the tracer at all. Both survive a worker's reply, where
	// Err is only text.
	BadTarget, Unsupported bool
}

func (e *AttachError) Error() string { return fmt.Sprintf("attach %s tracer: %v", e.Tracer, e.Err) }
func (e *AttachError) Unwrap() error { return e.Err }

// Is makes errors.Is see the classes of Err after a worker's reply.
func (e *AttachError) Is(target error) bool {
	return (e.BadTarget && target == tracing.ErrBadTarget) || (e.Unsupported && target == ebpf.ErrNotSupported)
}

// newAttachError classifies err of attaching tracer.
func newAttachError(tracer string, err error) *AttachError {
	return &AttachError{Tracer: tracer, Err: err,
		BadTarget:   errors.Is(err, tracing.ErrBadTarget),
		Unsupported: errors.Is(err, ebpf.ErrNotSupported)}
}

// Resolve applies the request's overrides to a scenario.
func (req Request) Resolve(s *scenarios.Scenario) *scenarios.Scenario {
	c := *s
	if req.Trials > 0 {
		c.Trials = req.Trials
	}
	if req.Duration > 0 {
		c.Duration = req.Duration
	}
	if req.WarmupSet {
		c.Warmup = req.Warmup
	}
	return &c
}

// NeedsBPF reports whether any scenario attaches a tracer.
func (req Request) NeedsBPF() bool {
	for _, s := range req.Scenarios {
		if NeedsBPF(s) {
			return true
		}
	}
	return false
}

// NeedsBPF reports whether s attaches a tracer.
func NeedsBPF(s *scenarios.Scenario) bool {
	return len(s.Tracers) > 0
}

// Run runs req. On error or cancellation it returns the Result measured so
// far, with Partial set, together with the error. Every tracer is detached
// before Run returns, on every path.
func Run(ctx context.Context, req Request) (*result.Result, error) {
	res := newResult(req)
	finish := func(err error) (*result.Result, error) {
		finishResult(res, err)
		return res, err
	}
	if req.NeedsBPF() {
		if err := tracing.CheckPrivileges(); err != nil {
			return finish(err)
		}
	}
	removeStaleGroups() // of runs killed outright
	var exe string
	if !req.InProcess {
		var err error
		if exe, err = req.workerExe(); err != nil {
			return finish(err)
		}
	}
	if req.InProcess && req.NeedsBPF() {
		if err := tracing.RemoveMemlock(); err != nil {
			return finish(err)
		}
	}
	// Every tracer of every scenario relocates against the same kernel BTF.
	kb := kernelBTF{cache: btf.NewCache(), types: req.KernelTypes}
	loads := req.Loads
	if loads == nil && !req.InProcess {
		loads = NewLoads()
		defer loads.Close()
	} else {
		// Another target's trials may run next, whole (a gate's rounds):
		// this one's programs must not run in them.
		defer loads.detach()
	}
	readied := false
	ready := func(ctx context.Context) error {
		if req.Ready == nil || readied {
			return nil
		}
		readied = true
		return req.Ready(ctx)
	}
	for i, s := range req.Scenarios {
		s = req.Resolve(s)
		var sr *result.Scenario
		var err error
		emit := emitter(s, i+1, len(req.Scenarios), req.Progress)
		if req.InProcess {
			sr, err = runScenario(ctx, s, kb, newSymbolizer(req.KernelText), emit, nil, ready)
		} else {
			sr, err = runScenarioWorkers(ctx, s, exe, loads, req.CPUOffset, emit)
		}
		if why := unsupported(err); req.SkipUnsupported && why != "" && (sr == nil || sr.Trials == 0) {
			res.Skipped = append(res.Skipped, result.Skipped{Scenario: s.Name, Reason: why})
			if req.Progress != nil {
				req.Progress(Event{Phase: PhaseSkipped, Scenario: s.Name, Index: i + 1, Count: len(req.Scenarios), Detail: why})
			}
			continue
		}
		if sr != nil && sr.Trials > 0 {
			// What the trials ran, found as they found it: identified
			// once here, not by every trial's worker.
			sr.Executables = scenarios.Executables(s)
			res.Scenarios = append(res.Scenarios, *sr)
		}
		if err != nil {
			return finish(fmt.Errorf("scenario %s: %w", s.Name, err))
		}
	}
	return finish(nil)
}

// newResult is the Result of req's run, begun now.
func newResult(req Request) *result.Result {
	res := &result.Result{
		Schema:      result.SchemaVersion,
		Tailgate:    version.Get(),
		Started:     time.Now().UTC(),
		Target:      req.Target,
		Environment: Environment(),
		Scenarios:   []result.Scenario{},
	}
	if res.Target.Name == "" {
		res.Target = result.Target{Name: "host", Kind: "host"}
	}
	return res
}

// finishResult ends res now, partial when err is not nil.
func finishResult(res *result.Result, err error) {
	res.Finished = time.Now().UTC()
	if err != nil {
		res.Partial = true
		res.Error = err.Error()
	}
}

// unsupported says why err means this machine cannot run the scenario at
// all: a tracer the kernel cannot load, or a workload whose device is not
// here (loop devices); "" for any other error.
func unsupported(err error) string {
	var ae *AttachError
	var ue *scenarios.UnavailableError
	switch {
	case errors.As(err, &ae) && ae.Unsupported:
		return ae.Error()
	case errors.As(err, &ue):
		return err.Error()
	}
	return ""
}

// attachTracers attaches the scenario's tracers, in the order of the
// registry, counting the tasks opts names (see traceOptions). With
// opts.Threads, they count only the threads the workload reports through
// its ThreadHook (and what those create), not tailgate's other threads.
func attachTracers(s *scenarios.Scenario, opts tracing.TracerOptions) ([]*tracing.Tracer, error) {
	var ts []*tracing.Tracer
	for _, k := range tracers.All {
		c := s.Tracers[k.Name]
		if c == nil {
			continue
		}
		t, err := k.New(c, opts)
		if err != nil {
			for _, t := range ts {
				t.Close()
			}
			if errors.Is(err, tracing.ErrPrivileges) {
				return nil, err
			}
			return nil, newAttachError(k.Name, err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// kernelBTF is what the tracers of a run relocate against: the kernel's
// BTF, decoded once and shared, or the types given instead; and the
// tracers loaded already, when a parent loaded them for every trial's
// worker (Loads).
type kernelBTF struct {
	cache  *btf.Cache
	types  *btf.Spec
	loaded *tracing.Loaded
}

// newSymbolizer is a symbolizer for a scenario's evidence that leaves the
// kernel's own text (text, when set) for the host to name.
func newSymbolizer(text symbols.TextRange) *symbols.Symbolizer {
	sym := symbols.NewSymbolizer()
	sym.LeaveCore(text)
	return sym
}

// runScenario runs every trial of s in this process, its progress told to
// emit and its evidence named by sym. With ctl (a sliced worker's), the
// parent says when to warm up and when to run each slice of the one trial
// (see sliceControl). ready, when set, is called once the tracers are
// attached (Request.Ready).
func runScenario(ctx context.Context, s *scenarios.Scenario, kb kernelBTF, sym *symbols.Symbolizer, emit func(Event), ctl *sliceControl, ready func(context.Context) error) (sr *result.Scenario, err error) {
	sr, err = newScenarioResult(s)
	if err != nil {
		return nil, err
	}

	wl, err := scenarios.NewWorkload(s.Workload)
	if err != nil {
		return sr, fmt.Errorf("workload: %w", err)
	}
	defer func() {
		// Close runs an exec workload's teardown: one that fails left the
		// machine in a state no one checked, which fails the run (exit 3).
		if cerr := wl.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("workload: %w", cerr))
		}
	}()

	emit(Event{Phase: PhaseAttach})
	at, err := attachScenario(s, wl, kb)
	if err != nil {
		return sr, err
	}
	defer at.close()
	if at.hook != nil {
		ctx = scenarios.WithThreadHook(ctx, at.hook)
	}
	for _, t := range at.tracers {
		sr.Tracers = append(sr.Tracers, result.TracerInfo{Name: t.Name(), Variant: string(t.Variant()), Probes: t.Probes(), Hooks: t.Hooks()})
	}
	if err := followTree(wl, at.tracers); err != nil {
		return sr, err
	}
	if ready != nil {
		if err := ready(ctx); err != nil {
			return sr, err
		}
	}
	if err := at.warmUp(ctx, s, wl, ctl, emit); err != nil {
		return sr, err
	}
	for trial := 1; trial <= s.Trials; trial++ {
		emit(Event{Phase: PhaseTrial, Trial: trial})
		m, err := at.trial(ctx, s, wl, ctl)
		if err == nil {
			err = measuredAll(s, m.stats, trial)
		}
		if err != nil {
			return sr, err // the cut trial is not kept
		}
		if err := at.addTrial(sr, m, sym); err != nil {
			return sr, err
		}
		sr.Trials = trial
		emit(Event{Phase: PhaseTrial, Trial: trial, Measured: &Measured{Ops: m.stats.Ops, Elapsed: m.elapsed, Events: events(sr)}})
	}
	emit(Event{Phase: PhaseDone, Trial: s.Trials})
	return sr, nil
}

// measuredAll checks that a trial's workload measured each metric it
// measures itself: a load command whose latencies are read may have
// written none by the trial's end.
func measuredAll(s *scenarios.Scenario, st scenarios.Stats, trial int) error {
	for _, name := range scenarios.WorkloadMetrics(s.Workload) {
		if st.Metrics[name] == nil {
			return fmt.Errorf("trial %d measured no %s: the workload's load was still running at the trial's end (%v) and wrote no latencies; make its run shorter than the duration, or have it write them on SIGINT", trial, name, s.Duration)
		}
	}
	return nil
}

// attached is what runScenario attached for a scenario: its tracers, the
// interference log they share, and, when they count the workload's own
// threads, the hook the workload tells them through and the first error
// the hook met.
type attached struct {
	tracers []*tracing.Tracer
	ilog    tracing.InterferenceLog
	hook    scenarios.ThreadHook
	hookErr func() error
	// cost is each tracer's mean run time per program run in the
	// warmup, ns (nil: not measured).
	cost []float64
}

// attachScenario attaches the tracers of s, counting the tasks of wl
// (traceOptions), with the interference log when they keep evidence.
func attachScenario(s *scenarios.Scenario, wl scenarios.Runner, kb kernelBTF) (*attached, error) {
	opts := traceOptions(wl, s.Workload, kb)
	opts.Evidence = s.Evidence
	ilog, err := loadInterference(s, kb)
	if err != nil {
		return nil, err
	}
	at := &attached{ilog: ilog, hookErr: func() error { return nil }}
	if ilog != nil {
		opts.Interference = ilog.Map()
	}
	if at.tracers, err = attachTracers(s, opts); err != nil {
		at.close()
		return nil, err
	}
	if opts.Threads && len(at.tracers) > 0 {
		at.hook, at.hookErr = threadHook(at.tracers)
	}
	return at, nil
}

// close detaches the tracers, then closes the interference log.
func (at *attached) close() {
	for _, t := range at.tracers {
		t.Close()
	}
	if at.ilog != nil {
		at.ilog.Close()
	}
}

// warmUp runs the warmup of s and reads what the tracers' programs cost
// a run in it. The kernel's run statistics are on only there: each
// program run pays two clock reads for them, which a trial's events would
// carry inside the latencies they measure (docs/formats.md, "bpf cost").
func (at *attached) warmUp(ctx context.Context, s *scenarios.Scenario, wl scenarios.Runner, ctl *sliceControl, emit func(Event)) error {
	measure := s.Warmup > 0 && len(at.tracers) > 0
	var before []tracing.RunStats
	var stats io.Closer
	if measure {
		// Refused without CAP_SYS_ADMIN or before 5.8: the cost reads 0.
		stats, _ = ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
		for _, t := range at.tracers {
			rs, _ := t.RunStats()
			before = append(before, rs)
		}
	}
	err := warmUp(ctx, s, wl, ctl, emit)
	if measure {
		at.cost = make([]float64, len(at.tracers))
		for i, t := range at.tracers {
			after, _ := t.RunStats()
			at.cost[i] = after.Sub(before[i]).PerRun()
		}
		if stats != nil {
			stats.Close()
		}
	}
	return err
}

// warmUp runs the warmup of s, when it has one, after the parent's word
// with ctl (a sliced worker's).
func warmUp(ctx context.Context, s *scenarios.Scenario, wl scenarios.Runner, ctl *sliceControl, emit func(Event)) error {
	if ctl != nil {
		if err := ctl.say("ready"); err != nil {
			return err
		}
		if err := ctl.await(ctx, "warm"); err != nil {
			return err
		}
	}
	if s.Warmup > 0 {
		emit(Event{Phase: PhaseWarmup})
		if err := startWorkload(ctx, wl); err != nil {
			return err
		}
		if _, err := runFor(ctx, wl, s.Warmup); err != nil {
			return err
		}
	}
	if ctl != nil {
		return ctl.say("ok")
	}
	return nil
}

// trialMeasures is what a trial measured beside its histograms: the
// workload's stats, how long it ran, the CPU time outside the workload
// (nil when unread), and its slices (0 for a trial run whole).
type trialMeasures struct {
	stats   scenarios.Stats
	elapsed time.Duration
	cpu     *result.CPUTime
	slices  int
}

// trial runs one trial of s: whole for s.Duration, or with ctl in the
// slices the parent asks for; the tracers reset at its start.
func (at *attached) trial(ctx context.Context, s *scenarios.Scenario, wl scenarios.Runner, ctl *sliceControl) (trialMeasures, error) {
	var m trialMeasures
	if err := startWorkload(ctx, wl); err != nil {
		return m, err
	}
	for _, t := range at.tracers {
		if err := t.Reset(); err != nil {
			return m, err
		}
	}
	var err error
	if ctl == nil {
		var cpu cpuSums
		var cpuOK bool
		m.stats, m.elapsed, cpu, cpuOK, err = timedRun(ctx, wl, s.Duration)
		if cpuOK {
			m.cpu = cpu.time()
		}
	} else {
		m, err = ctl.runSlices(ctx, wl)
	}
	if err == nil {
		err = at.hookErr()
	}
	return m, err
}

// addTrial adds the trial the tracers and the workload measured (m) to
// sr: a trial of each metric, and the tracers' evidence named by sym.
func (at *attached) addTrial(sr *result.Scenario, m trialMeasures, sym *symbols.Symbolizer) error {
	for i, t := range at.tracers {
		hs, err := t.Read()
		if err != nil {
			return err
		}
		var cost float64
		if at.cost != nil {
			cost = at.cost[i]
		}
		for _, name := range t.Metrics() {
			addTrial(sr, name, hs[name], cost, m)
		}
		if err := addEvidence(sr, sym, t); err != nil {
			return err
		}
	}
	for name, h := range m.stats.Metrics {
		addTrial(sr, name, h, 0, m)
	}
	return nil
}

// emitter returns what reports progress events of scenario s (idx of
// count) to progress, which may be nil.
func emitter(s *scenarios.Scenario, idx, count int, progress func(Event)) func(Event) {
	return func(e Event) {
		if progress != nil {
			e.Scenario, e.Index, e.Count, e.Trials = s.Name, idx, count, s.Trials
			progress(e)
		}
	}
}

func newScenarioResult(s *scenarios.Scenario) (*result.Scenario, error) {
	def, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &result.Scenario{
		Name:       s.Name,
		Definition: def,
		Params:     scenarios.Params(s),
		Gate:       scenarios.GatePolicy(s),
		Metrics:    map[string]*result.Metric{},
	}, nil
}

// runScenarioWorkers runs each trial of s in a fresh worker process and
// collects the trials into one scenario result.
func runScenarioWorkers(ctx context.Context, s *scenarios.Scenario, exe string, loads *Loads, offset *int, emit func(Event)) (*result.Scenario, error) {
	sr, err := newScenarioResult(s)
	if err != nil {
		return nil, err
	}
	emit(Event{Phase: PhaseAttach})
	loaded := loads.forScenario(s)
	for trial := 1; trial <= s.Trials; trial++ {
		emit(Event{Phase: PhaseTrial, Trial: trial})
		off := cpuOffset()
		if offset != nil {
			off = *offset
		}
		w, err := runWorkerTrial(ctx, exe, s, off, loaded)
		if err != nil {
			return sr, err // the cut trial is not kept
		}
		if trial == 1 {
			sr.Tracers = w.Tracers
		}
		ops, elapsed, err := workerTrial(w)
		if err != nil {
			return sr, err
		}
		for name, m := range w.Metrics {
			if sr.Metrics[name] == nil {
				sr.Metrics[name] = &result.Metric{Unit: m.Unit}
			}
			sr.Metrics[name].Trials = append(sr.Metrics[name].Trials, m.Trials[0])
		}
		sr.Trials = trial
		emit(Event{Phase: PhaseTrial, Trial: trial, Measured: &Measured{Ops: ops, Elapsed: elapsed, Events: events(sr)}})
	}
	emit(Event{Phase: PhaseDone, Trial: s.Trials})
	return sr, nil
}

// workerTrial checks that a worker's scenario result holds one trial of
// each metric, and returns that trial's ops and time for the progress line.
func workerTrial(w *result.Scenario) (ops uint64, elapsed time.Duration, err error) {
	for name, m := range w.Metrics {
		if len(m.Trials) != 1 {
			return 0, 0, fmt.Errorf("trial worker returned %d trials of %s, want 1", len(m.Trials), name)
		}
		ops, elapsed = m.Trials[0].Ops, time.Duration(m.Trials[0].Duration*float64(time.Second))
	}
	return ops, elapsed, nil
}

// JoinHooks is a SliceHook that calls first then next (either may be
// nil) as a side starts, and next then first as it stops, each whatever
// the other returned: one hook around another.
func JoinHooks(first, next func(bool) error) func(bool) error {
	switch {
	case first == nil:
		return next
	case next == nil:
		return first
	}
	return func(running bool) error {
		if running {
			return errors.Join(first(true), next(true))
		}
		return errors.Join(next(false), first(false))
	}
}

// workerExe is the program req's trial workers run: req.Exe, or this
// one.
func (req Request) workerExe() (string, error) {
	if req.Exe != "" {
		return req.Exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this program to start trial workers: %w", err)
	}
	return exe, nil
}

// threadHook returns the hook that adds the workload's threads to the
// tracers and takes them out again, and a function that reports the first
// error it met.
func threadHook(tracers []*tracing.Tracer) (scenarios.ThreadHook, func() error) {
	var mu sync.Mutex
	var first error
	hook := func(tid int, running bool) {
		for _, t := range tracers {
			var err error
			if running {
				err = t.AddThread(tid)
			} else {
				err = t.RemoveThread(tid)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}
	}
	return hook, func() error {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
}

// addTrial adds to sr's metric a trial of histogram h (nil: empty), the
// tracer's cost per program run beside it.
func addTrial(sr *result.Scenario, metric string, h *hist.Histogram, cost float64, m trialMeasures) {
	if h == nil {
		h = hist.New()
	}
	sm := sr.Metrics[metric]
	if sm == nil {
		sm = &result.Metric{Unit: "ns"}
		sr.Metrics[metric] = sm
	}
	sm.Trials = append(sm.Trials, result.Trial{
		Histogram:    h,
		Summary:      result.Summarize(h),
		TracerCostNs: cost,
		Ops:          m.stats.Ops,
		Duration:     m.elapsed.Seconds(),
		PID:          os.Getpid(),
		BootID:       bootID(),
		CPUs:         m.stats.CPUs,
		Device:       m.stats.Device,
		CPUTime:      m.cpu,
		Slices:       m.slices,
	})
}

// bootID is this boot's random id, which tells the trials of separate VM
// boots apart.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// events is each metric's events in sr's last trial.
func events(sr *result.Scenario) map[string]uint64 {
	out := make(map[string]uint64, len(sr.Metrics))
	for n, m := range sr.Metrics {
		if len(m.Trials) > 0 {
			out[n] = m.Trials[len(m.Trials)-1].Summary.Count
		}
	}
	return out
}

// timedRun runs the workload for d and says for how long it ran and what
// its CPUs spent meanwhile (ok false when /proc/stat was not read).
func timedRun(ctx context.Context, wl scenarios.Runner, d time.Duration) (st scenarios.Stats, elapsed time.Duration, cpu cpuSums, ok bool, err error) {
	snap, snapOK := takeCPUSnap()
	start := time.Now()
	st, err = runFor(ctx, wl, d)
	elapsed = time.Since(start)
	if after, afterOK := takeCPUSnap(); afterOK && snapOK {
		cpu, ok = cpuDelta(snap, after, st.CPUs), true
	}
	return st, elapsed, cpu, ok, err
}

// runFor runs the workload for d. A cancelled parent context is an error:
// the run was interrupted, and what it measured is incomplete.
func runFor(ctx context.Context, wl scenarios.Runner, d time.Duration) (scenarios.Stats, error) {
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	st, err := wl.Run(tctx)
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return st, fmt.Errorf("workload: %w", err)
	}
	return st, nil
}
