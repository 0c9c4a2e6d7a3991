// Package interfere logs what runs on each CPU, for the evidence of slow
// events (in the manner of rtla timerlat's auto-analysis): hardirq
// handlers by action name (irq:irq_handler_entry/exit), the local timer
// interrupt on x86 (irq_vectors:local_timer_entry/exit, where the kernel
// has it), softirqs by vector (irq:softirq_entry/exit) and the tasks that
// ran (sched:sched_switch).
//
// The log is a per-CPU array (bpf/include/interfere.h): the last 64
// segments of each CPU's time, each of one context. It counts nothing by
// itself. A tracer loaded with its Map (tracing.Options.Interference)
// walks the log of the event's CPU when an event passes its metric's
// evidence floor, and keeps in the event the time other contexts took in
// the event's window.
package interfere

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Segments is how many segments the log keeps per CPU: INTERFERE_LOG of
// interfere.h.
const Segments = 64

// Options configure Load.
type Options struct {
	// Variant forces a variant; empty tries tp_btf, then raw_tp.
	Variant     tracing.Variant
	BTF         *btf.Cache // shared decoded kernel BTF; nil decodes it anew
	KernelTypes *btf.Spec  // replace the kernel's BTF for CO-RE (tracing.Options.KernelTypes)
	// Loaded keeps the log's loaded programs and maps, or has them
	// (tracing.TracerOptions.Loaded).
	Loaded *tracing.Loaded
	// VerifierStats keeps each program's verification time for LoadCost
	// (tracing.TracerOptions.VerifierStats).
	VerifierStats bool
}

// Log is the loaded and attached log.
type Log struct {
	variant tracing.Variant
	coll    *ebpf.Collection
	loaded  *tracing.Loaded // holds coll and its links when set
	links   []link.Link
	timer   bool
	took    time.Duration // NewCollection's, for LoadCost
}

// Objects returns the log's BPF object, for internal/kerneltypes.
func Objects() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadInterfere) }

// OptionalTracepoints are the tracepoints Load attaches to only where the
// kernel has them, by the typedefs of their BTF (btf_trace_NAME), which a
// cut of the kernel's BTF must keep.
var OptionalTracepoints = []string{timerTracepoint}

const timerTracepoint = "local_timer_entry"

// Load loads and attaches the log's programs. On any failure everything
// loaded so far is closed.
func Load(opts Options) (*Log, error) {
	spec, err := loadInterfere()
	if err != nil {
		return nil, fmt.Errorf("interfere: %w", err)
	}
	// Kept programs say whether the timer is logged, without the
	// kernel's BTF to read (tens of ms a trial's worker need not spend).
	var timer bool
	if progs, ok := opts.Loaded.Programs("interfere"); ok {
		timer = slices.ContainsFunc(progs, func(p string) bool { return strings.HasPrefix(p, timerTracepoint) })
	} else {
		timer = tracing.HasTracepoint(opts.BTF, opts.KernelTypes, timerTracepoint)
	}
	var errs []error
	for _, v := range tracing.Variants(opts.Variant, opts.KernelTypes) {
		l, err := load(spec, opts, v, timer)
		if err == nil {
			return l, nil
		}
		var ve *tracing.VerifierError
		if errors.As(err, &ve) || errors.Is(err, tracing.ErrPrivileges) {
			return nil, err
		}
		errs = append(errs, fmt.Errorf("%s: %w", v, err))
	}
	return nil, fmt.Errorf("interfere: %w", errors.Join(errs...))
}

func load(spec *ebpf.CollectionSpec, opts Options, v tracing.Variant, timer bool) (_ *Log, err error) {
	suffix := "_btf"
	if v == tracing.RawTP {
		suffix = "_raw"
	}
	spec = spec.Copy()
	for name := range spec.Programs {
		if !strings.HasSuffix(name, suffix) || (!timer && strings.HasPrefix(name, "local_timer_")) {
			delete(spec.Programs, name)
		}
	}
	var took time.Duration // 0 for objects kept loaded earlier
	coll, owned, err := opts.Loaded.Collection("interfere", v, spec, nil, func() (*ebpf.Collection, error) {
		coll, d, err := tracing.NewCollection(spec, ebpf.CollectionOptions{
			Programs: ebpf.ProgramOptions{LogSizeStart: 1 << 20, KernelTypes: opts.KernelTypes},
			Cache:    opts.BTF,
		}, opts.VerifierStats)
		if err != nil {
			return nil, tracing.LoadError("interfere", err)
		}
		took = d
		return coll, nil
	})
	if err != nil {
		return nil, err
	}
	l := &Log{variant: v, coll: coll, timer: timer, took: took}
	if !owned {
		l.loaded = opts.Loaded
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	attach := func() ([]link.Link, error) { return attachAll(coll, spec, v) }
	if l.loaded != nil {
		// Kept programs stay attached with the Loaded, once.
		err = l.loaded.Attach("interfere", attach)
	} else {
		l.links, err = attach()
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// attachAll attaches every program of coll; it returns the links it made
// also when it fails part way, so that they are closed.
func attachAll(coll *ebpf.Collection, spec *ebpf.CollectionSpec, v tracing.Variant) ([]link.Link, error) {
	var links []link.Link
	for name, p := range coll.Programs {
		var lk link.Link
		var err error
		if v == tracing.TPBTF {
			lk, err = link.AttachTracing(link.TracingOptions{Program: p})
		} else {
			lk, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: spec.Programs[name].AttachTo, Program: p})
		}
		if err != nil {
			return links, fmt.Errorf("attach %s: %w", name, err)
		}
		links = append(links, lk)
	}
	return links, nil
}

// LoadCost returns what loading the log's programs cost.
func (l *Log) LoadCost() (tracing.LoadCost, error) { return tracing.CollectionCost(l.coll, l.took) }

// Map is the per-CPU log, for tracing.Options.Interference.
func (l *Log) Map() *ebpf.Map { return l.coll.Maps["interfere_log"] }

// Variant returns the variant that was attached.
func (l *Log) Variant() tracing.Variant { return l.variant }

// Timer reports whether the local timer interrupt is logged (x86 kernels
// with irq_vectors:local_timer_entry).
func (l *Log) Timer() bool { return l.timer }

// ProgramIDs returns the kernel IDs of the log's programs.
func (l *Log) ProgramIDs() []ebpf.ProgramID {
	var ids []ebpf.ProgramID
	for _, p := range l.coll.Programs {
		if info, err := p.Info(); err == nil {
			if id, ok := info.ID(); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// RunStats returns the summed run statistics of the log's programs (they
// count while BPF run-time statistics are enabled).
func (l *Log) RunStats() (tracing.RunStats, error) {
	var rs tracing.RunStats
	for name, p := range l.coll.Programs {
		s, err := p.Stats()
		if err != nil {
			return rs, fmt.Errorf("interfere: stats of %s: %w", name, err)
		}
		rs.Runtime += s.Runtime
		rs.Runs += s.RunCount
	}
	return rs, nil
}

// Close detaches and unloads what the Log owns; kept programs
// (tracing.Loaded) stay attached with the Loaded. It returns the first
// error.
func (l *Log) Close() error {
	var first error
	for _, lk := range l.links {
		if err := lk.Close(); err != nil && first == nil {
			first = fmt.Errorf("interfere: detach: %w", err)
		}
	}
	l.links = nil
	switch {
	case l.coll == nil:
	case l.loaded != nil:
		l.loaded.Release("interfere")
	default:
		l.coll.Close()
	}
	l.coll = nil
	return first
}
