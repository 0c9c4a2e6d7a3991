// Package tracing is the plumbing every tracer shares: picking the program
// variant at load time, attaching, reading and resetting the histogram maps
// of bpf/include/hist.bpf.h, and the kernel's run statistics of the
// programs. Tracer packages configure a CollectionSpec and hand it here.
package tracing

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// Variant is the kind of program a tracer attaches with.
type Variant string

const (
	// TPBTF programs (BTF-enabled raw tracepoints) get typed arguments and
	// trusted task pointers. Preferred.
	TPBTF Variant = "tp_btf"
	// RawTP programs work on kernels without tp_btf.
	RawTP Variant = "raw_tp"
)

// suffix is how programs of a variant are named in the C sources.
func (v Variant) suffix() string {
	if v == RawTP {
		return "_raw"
	}
	return "_btf"
}

// Must match HIST_MAX_METRICS in bpf/include/hist.bpf.h.
const maxMetrics = 16

// Options configure Load.
type Options struct {
	// Name is the tracer's name, for errors.
	Name string
	// Metrics names the tracer's metrics by index (the m of hist_record).
	Metrics []string
	// TracerOptions are the tasks to count, the kernel's BTF and the
	// evidence, as the tracer's constructor got them.
	TracerOptions
	// Variant forces a variant; empty tries tp_btf, then raw_tp.
	Variant Variant
	// Configure sets load-time constants on the spec (after the variant's
	// programs are chosen).
	Configure func(*ebpf.CollectionSpec) error
	// Keep names maps that a collection kept loaded (Loaded) hands from
	// one tracer to the next as they are, not emptied: a tracer whose
	// entries outlive it (a server's connections) and that dates them
	// itself.
	Keep []string
}

// Tracer is a loaded and attached set of programs counting into histograms.
type Tracer struct {
	name     string
	variant  Variant
	metrics  []string
	coll     *ebpf.Collection
	links    []link.Link
	hist     *ebpf.Map
	stats    *ebpf.Map
	tids     *ebpf.Map
	vars     map[string]*variable
	objs     *Loaded       // holds coll and its links when set
	gen      atomic.Uint64 // last follow_gen written; workload threads register concurrently
	missBase uint64        // recursion misses at the last Reset
	biased   bool          // followed carries followBias (FollowProcess)
	ev       *evidence
	smp      *sampler // stacks sampled in open requests; nil without
	ncpu     int
	probes   []result.Probe
	hooks    []string
	loadTook time.Duration // NewCollection's, for LoadCost
}

// ErrPrivileges reports missing privileges to load BPF programs.
var ErrPrivileges = errors.New("not enough privileges for BPF")

// VerifierError is a program the verifier rejected, with the end of its log.
type VerifierError struct {
	Tracer, Program string
	Tail            []string
	Err             error
}

func (e *VerifierError) Error() string {
	return fmt.Sprintf("%s: verifier rejected program %s:\n\t%s", e.Tracer, e.Program, strings.Join(e.Tail, "\n\t"))
}

func (e *VerifierError) Unwrap() error { return e.Err }

// Load loads spec's programs of the chosen variant and attaches them. The
// spec is not modified. On any failure everything loaded so far is closed.
func Load(spec *ebpf.CollectionSpec, opts Options) (*Tracer, error) {
	if len(opts.Metrics) > maxMetrics {
		return nil, fmt.Errorf("%s: %d metrics, at most %d", opts.Name, len(opts.Metrics), maxMetrics)
	}
	var errs []error
	for _, v := range Variants(opts.Variant, opts.KernelTypes) {
		t, err := load(spec, opts, v)
		if err == nil {
			return t, nil
		}
		var ve *VerifierError
		if errors.As(err, &ve) || errors.Is(err, ErrPrivileges) {
			return nil, err // another variant will not do better
		}
		errs = append(errs, fmt.Errorf("%s: %w", v, err))
	}
	return nil, fmt.Errorf("%s: %w", opts.Name, errors.Join(errs...))
}

// Variants are the variants a tracer tries, in order: the one forced, or
// tp_btf then raw_tp; raw_tp alone with kernel types given (Options).
func Variants(forced Variant, kernelTypes *btf.Spec) []Variant {
	switch {
	case forced != "":
		return []Variant{forced}
	case kernelTypes != nil:
		return []Variant{RawTP}
	}
	return []Variant{TPBTF, RawTP}
}

func load(spec *ebpf.CollectionSpec, opts Options, v Variant) (*Tracer, error) {
	spec = spec.Copy()
	for name := range spec.Programs {
		if !strings.HasSuffix(name, v.suffix()) {
			delete(spec.Programs, name)
		}
	}
	return loadTracer(spec, opts, v, loadError, func(coll *ebpf.Collection, spec *ebpf.CollectionSpec) ([]link.Link, error) {
		var links []link.Link
		for name, p := range coll.Programs {
			if p.Type() == ebpf.PerfEvent {
				ls, err := attachPerf(p)
				links = append(links, ls...)
				if err != nil {
					return links, fmt.Errorf("attach %s: %w", name, err)
				}
				continue
			}
			l, err := attach(p, spec.Programs[name], v)
			if err != nil {
				return links, fmt.Errorf("attach %s: %w", name, err)
			}
			links = append(links, l)
		}
		return links, nil
	})
}

// loadTracer makes the load-time settings of opts on spec (a copy, holding
// variant v's programs only), loads it, attaches it with attach and starts
// its evidence reader: what Load and LoadAttach share. loadErr classifies
// a load failure. On any failure everything loaded so far is closed.
func loadTracer(spec *ebpf.CollectionSpec, opts Options, v Variant, loadErr func(string, error) error, attach AttachFunc) (_ *Tracer, err error) {
	replace, err := configureSpec(spec, opts)
	if err != nil {
		return nil, err
	}
	coll, owned, took, err := loadCollection(spec, opts, v, replace, loadErr)
	if err != nil {
		return nil, err
	}
	t := &Tracer{
		name:     opts.Name,
		variant:  v,
		metrics:  opts.Metrics,
		coll:     coll,
		hist:     coll.Maps["hist"],
		stats:    coll.Maps["hist_stats"],
		tids:     coll.Maps["tids"],
		ncpu:     runtime.NumCPU(),
		loadTook: took,
	}
	if !owned {
		t.objs = opts.Loaded
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err = t.readVariables(spec); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if err = t.attach(opts.Loaded, func() ([]link.Link, error) { return attach(coll, spec) }); err != nil {
		return nil, err
	}
	if opts.Evidence > 0 && spec.Variables["evidence_on"] != nil {
		if t.ev, err = startEvidence(coll, t.vars, opts.Metrics, opts.Evidence); err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Name, err)
		}
		if spec.Variables["sample_on"] != nil {
			if t.smp, err = startSampler(coll, t.vars, t.ev.epoch); err != nil {
				return nil, fmt.Errorf("%s: %w", opts.Name, err)
			}
		}
	}
	return t, nil
}

// attach attaches the tracer's programs with attachFn: the links are the
// Tracer's when it owns its collection, else the kept collection's
// (Loaded.Attach), which may be attached already.
func (t *Tracer) attach(kept *Loaded, attachFn func() ([]link.Link, error)) error {
	if t.objs != nil {
		return kept.Attach(t.name, attachFn)
	}
	links, err := attachFn()
	t.links = append(t.links, links...)
	return err
}

// configureSpec makes the load-time settings of opts on spec: map sizes,
// the tasks followed, evidence, interference and the tracer's own
// Configure. It returns the maps the collection takes from elsewhere.
func configureSpec(spec *ebpf.CollectionSpec, opts Options) (map[string]*ebpf.Map, error) {
	// Size the histograms for the metrics in use, not the most a tracer
	// may have: per-CPU slots are allocated and zeroed at load.
	if m, ok := spec.Maps["hist"]; ok {
		m.MaxEntries = uint32(max(len(opts.Metrics), 1) * hist.Buckets)
	}
	if m, ok := spec.Maps["hist_stats"]; ok {
		m.MaxEntries = uint32(max(len(opts.Metrics), 1))
	}
	tgid, ok := spec.Variables["targ_tgid"]
	if !ok {
		return nil, fmt.Errorf("%s: object has no targ_tgid (include follow.bpf.h)", opts.Name)
	}
	if err := tgid.Set(opts.TGID); err != nil {
		return nil, fmt.Errorf("set targ_tgid: %w", err)
	}
	if err := spec.Variables["targ_threads"].Set(opts.Threads); err != nil {
		return nil, fmt.Errorf("set targ_threads: %w", err)
	}
	if err := configureCgroup(spec, opts.CgroupID); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if err := configureEvidence(spec, opts.Evidence); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if err := configureSamples(spec, opts.Evidence); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	replace, err := configureInterference(spec, opts.Evidence, opts.Interference)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if opts.Configure != nil {
		if err := opts.Configure(spec); err != nil {
			return nil, err
		}
	}
	return replace, nil
}

// loadCollection loads spec, or takes the collection opts.Loaded keeps for
// it; owned says the caller closes it, took is the load's time (0 when it
// was loaded earlier).
func loadCollection(spec *ebpf.CollectionSpec, opts Options, v Variant, replace map[string]*ebpf.Map, loadErr func(string, error) error) (coll *ebpf.Collection, owned bool, took time.Duration, err error) {
	skip := make(map[string]*ebpf.Map, len(replace)+len(opts.Keep))
	maps.Copy(skip, replace)
	for _, name := range opts.Keep {
		skip[name] = nil
	}
	coll, owned, err = opts.Loaded.Collection(opts.Name, v, spec, skip, func() (*ebpf.Collection, error) {
		coll, d, err := NewCollection(spec, ebpf.CollectionOptions{
			Programs:        ebpf.ProgramOptions{LogSizeStart: 1 << 20, KernelTypes: opts.KernelTypes},
			Cache:           opts.BTF,
			MapReplacements: replace,
		}, opts.VerifierStats)
		if err != nil {
			return nil, loadErr(opts.Name, err)
		}
		took = d
		return coll, nil
	})
	return coll, owned, took, err
}

// readVariables checks that the loaded objects have their histogram maps
// and reads what the tracer keeps of them: the global variables, the
// follow generation they start at, the possible CPUs.
func (t *Tracer) readVariables(spec *ebpf.CollectionSpec) error {
	if t.hist == nil || t.stats == nil {
		return errors.New("object has no hist/hist_stats maps")
	}
	vars, err := variablesOf(t.coll, spec)
	if err != nil {
		return err
	}
	t.vars = vars
	if v, ok := t.vars["follow_gen"]; ok {
		var gen uint64
		if err := v.Get(&gen); err != nil {
			return err
		}
		t.gen.Store(gen)
	}
	if n, err := ebpf.PossibleCPU(); err == nil {
		t.ncpu = n
	}
	return nil
}

// configureEvidence turns evidence on in objects that have it, with a
// ring sized for it, or shrinks the ring to one page when it is off.
func configureEvidence(spec *ebpf.CollectionSpec, k int) error {
	on, ok := spec.Variables["evidence_on"]
	if !ok {
		return nil
	}
	if err := on.Set(k > 0); err != nil {
		return fmt.Errorf("set evidence_on: %w", err)
	}
	if m, ok := spec.Maps["evidence_events"]; ok && k == 0 {
		m.MaxEntries = uint32(os.Getpagesize())
	}
	return nil
}

func attach(p *ebpf.Program, ps *ebpf.ProgramSpec, v Variant) (link.Link, error) {
	if v == TPBTF {
		return link.AttachTracing(link.TracingOptions{Program: p})
	}
	return link.AttachRawTracepoint(link.RawTracepointOptions{Name: ps.AttachTo, Program: p})
}

func loadError(tracer string, err error) error {
	// The verifier says no with EACCES: look for its log before taking the
	// error for missing privileges.
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		prog := ""
		// cilium/ebpf wraps as "program NAME: load program: ...".
		if s := err.Error(); strings.HasPrefix(s, "program ") {
			prog = strings.SplitN(strings.TrimPrefix(s, "program "), ":", 2)[0]
		}
		tail := ve.Log
		if len(tail) > 8 {
			tail = tail[len(tail)-8:]
		}
		return &VerifierError{Tracer: tracer, Program: prog, Tail: tail, Err: err}
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s: %w: %v", tracer, ErrPrivileges, err)
	}
	return err
}

// Name returns the tracer's name.
func (t *Tracer) Name() string { return t.name }

// Variant returns the variant that was attached.
func (t *Tracer) Variant() Variant { return t.variant }

// SetProbes records where a uprobe tracer set its entry probes.
func (t *Tracer) SetProbes(p []result.Probe) { t.probes = p }

// Probes returns what SetProbes recorded (nil for other tracers).
func (t *Tracer) Probes() []result.Probe { return t.probes }

// SetHooks records the tracepoints a tracer that chooses among them
// attached to (the request tracer: the socket layer's, or sys_exit).
func (t *Tracer) SetHooks(h []string) { t.hooks = h }

// Hooks returns what SetHooks recorded (nil for other tracers).
func (t *Tracer) Hooks() []string { return t.hooks }

// Metrics returns the tracer's metric names.
func (t *Tracer) Metrics() []string { return t.metrics }

// AddThread counts thread tid of the traced process from now on (with
// Options.Threads).
func (t *Tracer) AddThread(tid int) error {
	if err := t.tids.Update(uint32(tid), uint8(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("%s: add thread %d: %w", t.name, tid, err)
	}
	return t.bumpGen()
}

// bumpGen tells programs that cache the filter's verdict per task that the
// set of threads changed.
func (t *Tracer) bumpGen() error {
	v, ok := t.vars["follow_gen"]
	if !ok {
		return nil
	}
	if err := v.Set(t.gen.Add(1)); err != nil {
		return fmt.Errorf("%s: follow_gen: %w", t.name, err)
	}
	return nil
}

// RemoveThread stops counting thread tid.
func (t *Tracer) RemoveThread(tid int) error {
	if err := t.tids.Delete(uint32(tid)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("%s: remove thread %d: %w", t.name, tid, err)
	}
	return t.bumpGen()
}

// Reset zeroes the histograms, e.g. between trials.
func (t *Tracer) Reset() error {
	n := len(t.metrics) * hist.Buckets
	if err := zeroKeys(t.hist, n); err != nil {
		return fmt.Errorf("%s: reset hist: %w", t.name, err)
	}
	if err := zeroKeys(t.stats, len(t.metrics)); err != nil {
		return fmt.Errorf("%s: reset hist_stats: %w", t.name, err)
	}
	if v, ok := t.vars["hist_missed"]; ok {
		if err := v.Set(uint64(0)); err != nil {
			return fmt.Errorf("%s: reset hist_missed: %w", t.name, err)
		}
	}
	rm, err := t.recursionMisses()
	if err != nil {
		return err
	}
	t.missBase = rm
	if t.ev != nil {
		if err := t.ev.reset(); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if t.smp != nil {
			if err := t.smp.reset(t.ev.epoch); err != nil {
				return fmt.Errorf("%s: samples: %w", t.name, err)
			}
		}
	}
	return nil
}

// recursionMisses sums the runs the kernel skipped because the program was
// already running on that CPU.
func (t *Tracer) recursionMisses() (uint64, error) {
	var n uint64
	for name, p := range t.coll.Programs {
		s, err := p.Stats()
		if err != nil {
			return 0, fmt.Errorf("%s: stats of %s: %w", t.name, name, err)
		}
		n += s.RecursionMisses
	}
	return n, nil
}

// Missed returns how many events the tracer lost since it was loaded or
// last Reset: runs the kernel skipped (the program was already running on
// that CPU), and events whose per-task state was busy or could not be
// allocated.
func (t *Tracer) Missed() (uint64, error) {
	rm, err := t.recursionMisses()
	if err != nil {
		return 0, err
	}
	n := rm - t.missBase
	if v, ok := t.vars["hist_missed"]; ok {
		var m uint64
		if err := v.Get(&m); err != nil {
			return 0, fmt.Errorf("%s: read hist_missed: %w", t.name, err)
		}
		n += m
	}
	return n, nil
}

// stats mirrors struct hist_stats.
type stats struct {
	Count, Sum, Min, Max uint64
}

// Read returns each metric's histogram, merged over CPUs.
func (t *Tracer) Read() (map[string]*hist.Histogram, error) {
	n := len(t.metrics) * hist.Buckets
	keys := make([]uint32, n)
	vals := make([]uint64, n*t.ncpu)
	var cursor ebpf.MapBatchCursor
	got, err := t.hist.BatchLookup(&cursor, keys, vals, nil)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil, fmt.Errorf("%s: read hist: %w", t.name, err)
	}
	if got < n {
		return nil, fmt.Errorf("%s: read hist: %d of %d buckets", t.name, got, n)
	}
	skeys := make([]uint32, len(t.metrics))
	svals := make([]stats, len(t.metrics)*t.ncpu)
	var scursor ebpf.MapBatchCursor
	if _, err := t.stats.BatchLookup(&scursor, skeys, svals, nil); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil, fmt.Errorf("%s: read hist_stats: %w", t.name, err)
	}
	out := make(map[string]*hist.Histogram, len(t.metrics))
	for m, name := range t.metrics {
		h := hist.New()
		for b := 0; b < hist.Buckets; b++ {
			k := m*hist.Buckets + b
			var c uint64
			for cpu := 0; cpu < t.ncpu; cpu++ {
				c += vals[k*t.ncpu+cpu]
			}
			h.AddBucket(b, c)
		}
		var s stats
		first := true
		for cpu := 0; cpu < t.ncpu; cpu++ {
			cs := svals[m*t.ncpu+cpu]
			if cs.Count == 0 {
				continue
			}
			s.Count += cs.Count
			s.Sum += cs.Sum
			if first || cs.Min < s.Min {
				s.Min = cs.Min
			}
			if cs.Max > s.Max {
				s.Max = cs.Max
			}
			first = false
		}
		// The stats and buckets are updated one after the other without a
		// lock, and an event may land between reading the two: only trust
		// the exact extremes when both saw the same events and they fall in
		// the first and last buckets counted.
		if s.Count == h.Count() && s.Count > 0 && extremesFit(h.Counts(), s.Min, s.Max) {
			h.SetExtremes(s.Min, s.Max, float64(s.Sum))
		}
		out[name] = h
	}
	return out, nil
}

// extremesFit reports whether min and max fall in the first and last
// non-empty buckets of counts.
func extremesFit(counts []uint64, min, max uint64) bool {
	first, last := -1, -1
	for i, c := range counts {
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first >= 0 && hist.Bucket(min) == first && hist.Bucket(max) == last
}

// RunStats is the kernel's accounting of the tracer's programs, summed.
// It counts only while BPF statistics are enabled (see EnableStats).
type RunStats struct {
	Runtime time.Duration
	Runs    uint64
}

// Sub returns s − o.
func (s RunStats) Sub(o RunStats) RunStats {
	return RunStats{Runtime: s.Runtime - o.Runtime, Runs: s.Runs - o.Runs}
}

// PerRun returns the mean run time per program run in ns.
func (s RunStats) PerRun() float64 {
	if s.Runs == 0 {
		return 0
	}
	return float64(s.Runtime.Nanoseconds()) / float64(s.Runs)
}

// RunStats returns the summed run statistics of the tracer's programs
// that count events: a perf event's sampler runs on a clock, not per
// event, and its runs would dilute the cost per event.
func (t *Tracer) RunStats() (RunStats, error) {
	var rs RunStats
	for name, p := range t.coll.Programs {
		if p.Type() == ebpf.PerfEvent {
			continue
		}
		s, err := p.Stats()
		if err != nil {
			return rs, fmt.Errorf("%s: stats of %s: %w", t.name, name, err)
		}
		rs.Runtime += s.Runtime
		rs.Runs += s.RunCount
	}
	return rs, nil
}

// ProgramIDs returns the kernel IDs of the tracer's programs.
func (t *Tracer) ProgramIDs() []ebpf.ProgramID {
	var ids []ebpf.ProgramID
	for _, p := range t.coll.Programs {
		if info, err := p.Info(); err == nil {
			if id, ok := info.ID(); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// Close detaches and unloads what the Tracer owns; the programs of a kept
// collection (Loaded) stay attached, counting no task. It returns the
// first error.
func (t *Tracer) Close() error {
	var first error
	for _, l := range t.links {
		if err := l.Close(); err != nil && first == nil {
			first = fmt.Errorf("%s: detach: %w", t.name, err)
		}
	}
	t.links = nil
	if t.ev != nil {
		t.ev.close()
		t.ev = nil
	}
	if t.smp != nil {
		t.smp.close()
		t.smp = nil
	}
	switch {
	case t.coll == nil:
	case t.objs != nil:
		// The programs stay attached (Loaded): they count no task until
		// the next Tracer's reuse says which.
		if err := t.stopCounting(); err != nil && first == nil {
			first = err
		}
		t.objs.Release(t.name)
	default:
		t.coll.Close()
	}
	t.coll = nil
	return first
}

// LoadedPrograms returns the IDs of every BPF program loaded in the kernel,
// for checks that nothing outlives a tracer.
func LoadedPrograms() ([]ebpf.ProgramID, error) {
	var ids []ebpf.ProgramID
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, next)
		id = next
	}
}

// StillLoaded returns which of ids are loaded in the kernel, waiting up to
// timeout for them to go: the kernel frees a closed program after an RCU
// grace period, not at once.
func StillLoaded(ids []ebpf.ProgramID, timeout time.Duration) ([]ebpf.ProgramID, error) {
	deadline := time.Now().Add(timeout)
	for {
		loaded, err := LoadedPrograms()
		if err != nil {
			return nil, err
		}
		var left []ebpf.ProgramID
		for _, id := range ids {
			for _, l := range loaded {
				if l == id {
					left = append(left, id)
					break
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}
