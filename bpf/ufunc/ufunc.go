// Package ufunc is the user function latency tracer: for each configured
// function of an ELF executable or shared library, the time from its entry
// to its return in the workload's tasks, as metric
// ufunc.<binary>:<symbol>, with uprobes and uretprobes (Linux 5.15, for
// attach cookies).
//
// The probes are set in the file, so they fire in every process that runs
// the code (and each call there takes a trap); the workload's tasks are
// told from the others in the kernel by follow.bpf.h. Go binaries are
// refused (see GoBinaryError).
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
	path, probes, err := Check(opts.Binary, opts.Symbols)
	if err != nil {
		return nil, err
	}
	ex, err := link.OpenExecutable(path)
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
	if err := tracing.KeepPrograms(spec, append([]string{"ufunc_entry", "ufunc_return"}, follow...)...); err != nil {
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
		for i, sym := range opts.Symbols {
			// Both probes on one instruction (past a leading endbr64,
			// see entryProbes): one breakpoint, hit once a call.
			o := &link.UprobeOptions{Cookie: uint64(i), Offset: probes[i].Offset}
			// The return first: an entry timed before its return probe
			// is set would stay in the task's slot until the next call.
			l, err := ex.Uretprobe(sym, coll.Programs["ufunc_return"], o)
			if err != nil {
				return links, fmt.Errorf("attach uretprobe to %s:%s: %w", opts.Binary, sym, err)
			}
			links = append(links, l)
			if l, err = ex.Uprobe(sym, coll.Programs["ufunc_entry"], o); err != nil {
				return links, fmt.Errorf("attach uprobe to %s:%s: %w", opts.Binary, sym, err)
			}
			links = append(links, l)
		}
		return links, nil
	})
	if err != nil {
		return nil, fmt.Errorf("ufunc: %w", err)
	}
	t.SetProbes(probes)
	return t, nil
}
