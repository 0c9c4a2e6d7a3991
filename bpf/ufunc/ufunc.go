// Package ufunc is the user function latency tracer: for each configured
// function of an ELF executable or shared library, the time from its entry
// to its return in the workload's tasks, as metric
// ufunc.<binary>:<symbol>, with uprobes and uretprobes (Linux 5.15, for
// attach cookies); a Go function with a uprobe at its entry and one at
// each of its RET instructions (found by internal/retsite), keyed by the
// goroutine (see ufunc.bpf.c).
//
// The probes are set in the file, so they fire in every process that runs
// the code (and each call there takes a trap); the workload's tasks are
// told from the others in the kernel by follow.bpf.h.
package ufunc

import (
	"fmt"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Uprobe is the tracer's one variant.
const Uprobe = tracing.Uprobe

// maxSymbols must match HIST_MAX_METRICS in hist.bpf.h: the cookie is a
// metric index.
const maxSymbols = 16

// Metric returns the metric name of symbol in binary:
// ufunc.<base name of binary>:<symbol>.
func Metric(binary, symbol string) string {
	return "ufunc." + filepath.Base(binary) + ":" + symbol
}

// Options configure the tracer. The evidence of a slow call has the
// stack it returned to.
type Options struct {
	tracing.TracerOptions
	// Binary is the executable or shared library: a path, or the name of
	// an executable in $PATH.
	Binary string
	// Symbols are the functions of Binary to time.
	Symbols []string
}

// New checks the binary and its symbols (see Check), then loads and
// attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	target, err := Check(opts.Binary, opts.Symbols)
	if err != nil {
		return nil, err
	}
	ex, err := link.OpenExecutable(target.Path)
	if err != nil {
		return nil, &BinaryError{Binary: opts.Binary, Err: err}
	}
	metrics := make([]string, len(opts.Symbols))
	for i, s := range opts.Symbols {
		metrics[i] = Metric(opts.Binary, s)
	}
	spec, err := loadUfunc()
	if err != nil {
		return nil, fmt.Errorf("ufunc: %w", err)
	}
	follow := []string{"sched_process_fork_raw", "sched_process_exit_raw"}
	entry, ret := "ufunc_entry", "ufunc_return"
	if target.Go != nil {
		entry, ret = "ufunc_go_entry", "ufunc_go_return"
	} else {
		delete(spec.Maps, "go_start") // a map of its own programs only
	}
	if err := tracing.KeepPrograms(spec, append([]string{entry, ret}, follow...)...); err != nil {
		return nil, fmt.Errorf("ufunc: %w", err)
	}
	t, err := tracing.LoadAttach(spec, tracing.Options{
		Name:          "ufunc",
		Metrics:       metrics,
		TracerOptions: opts.TracerOptions,
	}, Uprobe, func(coll *ebpf.Collection, spec *ebpf.CollectionSpec) ([]link.Link, error) {
		var links []link.Link
		// The fork and exit programs first, so that a child forked while
		// the probes attach is followed.
		for _, name := range follow {
			l, err := tracing.AttachTracepoint(coll.Programs[name], spec.Programs[name])
			if err != nil {
				return links, fmt.Errorf("attach %s: %w", name, err)
			}
			links = append(links, l)
		}
		attach := attachC
		if target.Go != nil {
			attach = attachGo
		}
		for i, sym := range opts.Symbols {
			// The return probes first: an entry timed before its return
			// probes are set would stay behind until the next call.
			ls, err := attach(ex, coll.Programs[entry], coll.Programs[ret], target, i, sym)
			links = append(links, ls...)
			if err != nil {
				return links, fmt.Errorf("%s:%s: %w", opts.Binary, sym, err)
			}
		}
		return links, nil
	})
	if err != nil {
		return nil, fmt.Errorf("ufunc: %w", err)
	}
	t.SetProbes(target.Probes)
	return t, nil
}

// attachC attaches symbol i of target, sym, with a uprobe and a
// uretprobe, both on one instruction (past a leading endbr64, see
// entryProbe): one breakpoint, hit once a call.
func attachC(ex *link.Executable, entry, ret *ebpf.Program, target *Target, i int, sym string) ([]link.Link, error) {
	o := &link.UprobeOptions{Cookie: uint64(i), Offset: target.Probes[i].Offset}
	r, err := ex.Uretprobe(sym, ret, o)
	if err != nil {
		return nil, fmt.Errorf("attach uretprobe: %w", err)
	}
	e, err := ex.Uprobe(sym, entry, o)
	if err != nil {
		return []link.Link{r}, fmt.Errorf("attach uprobe: %w", err)
	}
	return []link.Link{r, e}, nil
}

// attachGo attaches symbol i of target, a Go function, with a uprobe at
// its entry and one at each of its RETs, by file offset (a Go binary
// stripped of its symbol table has its functions in its pclntab only).
func attachGo(ex *link.Executable, entry, ret *ebpf.Program, target *Target, i int, sym string) ([]link.Link, error) {
	var links []link.Link
	for _, off := range target.Go[i].Rets {
		l, err := ex.Uprobe(sym, ret, &link.UprobeOptions{Cookie: uint64(i), Address: off})
		if err != nil {
			return links, fmt.Errorf("attach uprobe at the RET at file offset %#x: %w", off, err)
		}
		links = append(links, l)
	}
	l, err := ex.Uprobe(sym, entry, &link.UprobeOptions{Cookie: uint64(i), Address: target.Go[i].Entry})
	if err != nil {
		return links, fmt.Errorf("attach uprobe at its entry: %w", err)
	}
	return append(links, l), nil
}
