// Package kfunc is the kernel function latency tracer, in the manner of
// funclatency: for each configured kernel function, the time from its
// entry to its return in the workload's tasks, as metric kfunc.<function>.
//
// It attaches with fentry/fexit where the kernel allows (BPF trampolines,
// the function described by the kernel's BTF, attach cookies: Linux 5.19),
// else with kprobe/kretprobe (Linux 5.15), chosen at load time and
// reported by Tracer.Variant.
package kfunc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// The variants, in the order New tries them.
const (
	Fentry = tracing.Fentry
	Kprobe = tracing.Kprobe
)

// maxFunctions must match HIST_MAX_METRICS in hist.bpf.h: the cookie is a
// metric index.
const maxFunctions = 16

// Metric returns the metric name of a kernel function.
func Metric(function string) string { return "kfunc." + function }

// Options configure the tracer. The evidence of a slow call has the
// stack it returned to.
type Options struct {
	tracing.TracerOptions
	// Functions are the kernel functions to time, e.g. vfs_read; metric
	// kfunc.<function> each.
	Functions []string
	// Variant forces Fentry or Kprobe; empty tries fentry, then kprobe.
	Variant tracing.Variant
}

// New checks that the running kernel has the functions (an
// *UnknownFunctionError if not), then loads and attaches the tracer. A
// kernel that allows none of the variants tried is an error wrapping
// ebpf.ErrNotSupported.
func New(opts Options) (*tracing.Tracer, error) {
	if err := validate(opts.Functions); err != nil {
		return nil, err
	}
	variants := []tracing.Variant{Fentry, Kprobe}
	switch opts.Variant {
	case "":
	case Fentry, Kprobe:
		variants = []tracing.Variant{opts.Variant}
	default:
		return nil, fmt.Errorf("kfunc: variant %q; the tracer has %s and %s", opts.Variant, Fentry, Kprobe)
	}
	cache := opts.BTF
	if cache == nil {
		cache = btf.NewCache()
	}
	kernel, err := cache.Kernel()
	if err != nil {
		// Task storage and typed task pointers need BTF whatever the variant.
		return nil, fmt.Errorf("kfunc: kernel BTF: %w", err)
	}
	res, err := resolve(opts.Functions, kernel, openProcKallsyms)
	if err != nil {
		return nil, err
	}
	metrics := make([]string, len(opts.Functions))
	for i, fn := range opts.Functions {
		metrics[i] = Metric(fn)
	}
	spec, err := loadKfunc()
	if err != nil {
		return nil, fmt.Errorf("kfunc: %w", err)
	}
	topts := tracing.Options{Name: "kfunc", Metrics: metrics, TracerOptions: opts.TracerOptions}
	topts.BTF = cache
	var errs []error
	missing := true // every variant failed for want of a kernel feature
	for _, v := range variants {
		var t *tracing.Tracer
		var err error
		switch v {
		case Fentry:
			if len(res.noBTF) > 0 {
				err = fmt.Errorf("the kernel's BTF does not describe %v, which a trampoline needs", res.noBTF)
				break
			}
			t, err = loadFentry(spec, topts, opts.Functions)
		case Kprobe:
			t, err = loadKprobe(spec, topts, opts.Functions)
		}
		if err == nil {
			return t, nil
		}
		if errors.Is(err, tracing.ErrPrivileges) {
			return nil, err // another variant will not do better
		}
		if !unsupported(v, err) {
			missing = false
		}
		errs = append(errs, fmt.Errorf("%s: %w", v, err))
	}
	if missing {
		return nil, &UnsupportedError{Variants: variants, Errs: errs}
	}
	return nil, fmt.Errorf("kfunc: %w", errors.Join(errs...))
}

// UnsupportedError is a kernel that allows none of the variants tried:
// no BPF trampolines (fentry refused to a process that may load BPF) and
// no kprobes. It matches ebpf.ErrNotSupported; Errs are each variant's
// failure, in the order of Variants.
type UnsupportedError struct {
	Variants []tracing.Variant
	Errs     []error
}

func (e *UnsupportedError) Error() string {
	var why []string
	for _, v := range e.Variants {
		switch v {
		case Fentry:
			why = append(why, "fentry (the kernel refuses trampoline programs)")
		case Kprobe:
			why = append(why, "kprobe (no kprobe PMU, no kprobe_events in tracefs)")
		}
	}
	if len(why) == 1 {
		return "kfunc: this kernel does not allow " + why[0]
	}
	return "kfunc: this kernel allows neither " + strings.Join(why, " nor ")
}

func (e *UnsupportedError) Unwrap() []error { return append([]error{ebpf.ErrNotSupported}, e.Errs...) }

// unsupported reports whether variant v failed for want of a kernel
// feature, not of the functions or the programs: trampolines refused to a
// process that may load BPF, or no kprobes (neither the kprobe PMU nor
// tracefs's kprobe_events).
func unsupported(v tracing.Variant, err error) bool {
	if errors.Is(err, ebpf.ErrNotSupported) {
		return true
	}
	if v == Kprobe {
		for _, p := range []string{"/sys/bus/event_source/devices/kprobe/type", "/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"} {
			if _, err := os.Stat(p); err == nil {
				return false
			}
		}
		return true
	}
	return false
}

// loadFentry loads a fentry/fexit pair for each function: a trampoline
// program names its target when it is loaded.
func loadFentry(spec *ebpf.CollectionSpec, opts tracing.Options, functions []string) (*tracing.Tracer, error) {
	spec = spec.Copy()
	entry, exit := spec.Programs["kfunc_entry"], spec.Programs["kfunc_exit"]
	keep := []string{"sched_process_fork_btf", "sched_process_exit_btf"}
	for i, fn := range functions {
		for _, p := range []*ebpf.ProgramSpec{entry, exit} {
			c := p.Copy()
			c.AttachTo = fn
			name := p.Name + "_" + strconv.Itoa(i)
			spec.Programs[name] = c
			keep = append(keep, name)
		}
	}
	if err := tracing.KeepPrograms(spec, keep...); err != nil {
		return nil, err
	}
	return tracing.LoadAttach(spec, opts, Fentry, func(coll *ebpf.Collection, spec *ebpf.CollectionSpec) ([]link.Link, error) {
		links, err := attachFollow(coll, spec, "sched_process_fork_btf", "sched_process_exit_btf")
		if err != nil {
			return links, err
		}
		for i, fn := range functions {
			// The exit first: an entry timed before its exit is attached
			// would stay in the task's slot until the next call.
			for _, prog := range []string{"kfunc_exit", "kfunc_entry"} {
				name := prog + "_" + strconv.Itoa(i)
				l, err := link.AttachTracing(link.TracingOptions{
					Program: coll.Programs[name],
					// A cookie needs a tracing link, made for an attach
					// type named here.
					AttachType: spec.Programs[name].AttachType,
					Cookie:     uint64(i),
				})
				if err != nil {
					return links, fmt.Errorf("attach %s to %s: %w", prog, fn, err)
				}
				links = append(links, l)
			}
		}
		return links, nil
	})
}

// loadKprobe loads one kprobe/kretprobe pair and attaches it to each
// function.
func loadKprobe(spec *ebpf.CollectionSpec, opts tracing.Options, functions []string) (*tracing.Tracer, error) {
	spec = spec.Copy()
	if err := tracing.KeepPrograms(spec, "kprobe_entry", "kprobe_return", "sched_process_fork_raw", "sched_process_exit_raw"); err != nil {
		return nil, err
	}
	return tracing.LoadAttach(spec, opts, Kprobe, func(coll *ebpf.Collection, spec *ebpf.CollectionSpec) ([]link.Link, error) {
		links, err := attachFollow(coll, spec, "sched_process_fork_raw", "sched_process_exit_raw")
		if err != nil {
			return links, err
		}
		for i, fn := range functions {
			o := &link.KprobeOptions{Cookie: uint64(i)}
			l, err := link.Kretprobe(fn, coll.Programs["kprobe_return"], o)
			if err != nil {
				return links, fmt.Errorf("attach kretprobe to %s: %w", fn, err)
			}
			links = append(links, l)
			if l, err = link.Kprobe(fn, coll.Programs["kprobe_entry"], o); err != nil {
				return links, fmt.Errorf("attach kprobe to %s: %w", fn, err)
			}
			links = append(links, l)
		}
		return links, nil
	})
}

// attachFollow attaches the fork and exit programs of follow.bpf.h, before
// the probes, so that a child forked while they attach is followed.
func attachFollow(coll *ebpf.Collection, spec *ebpf.CollectionSpec, progs ...string) ([]link.Link, error) {
	var links []link.Link
	for _, name := range progs {
		l, err := tracing.AttachTracepoint(coll.Programs[name], spec.Programs[name])
		if err != nil {
			return links, fmt.Errorf("attach %s: %w", name, err)
		}
		links = append(links, l)
	}
	return links, nil
}
