package tracing

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Variants of tracers that time functions rather than tracepoints.
const (
	// Fentry programs (fentry and fexit, through BPF trampolines) are the
	// cheapest way into a kernel function. Preferred; needs BTF for the
	// function and, for the attach cookie, Linux 5.19.
	Fentry Variant = "fentry"
	// Kprobe programs (kprobe and kretprobe) work where trampolines do
	// not, and on functions the kernel's BTF does not describe.
	Kprobe Variant = "kprobe"
	// Uprobe programs (uprobe and uretprobe) time user-space functions.
	Uprobe Variant = "uprobe"
)

// ErrBadTarget is what a tracer's error is when what it was asked to trace
// does not exist or cannot be traced: a kernel function the kernel lacks,
// a symbol a binary does not define, a Go function of a binary older than
// Go's register ABI or whose returns cannot all be found. It is the
// user's input at fault (tailgate exits 2), not a failure to attach (3).
// Tracer packages return rich error types that match it with errors.Is.
var ErrBadTarget = errors.New("no such thing to trace")

// AttachFunc attaches the programs of coll, loaded from spec. It returns
// the links it made also when it fails part way, so that they are closed.
type AttachFunc func(coll *ebpf.Collection, spec *ebpf.CollectionSpec) ([]link.Link, error)

// LoadAttach is Load for tracers that attach their own way: one program
// per traced function, or one program at several places with a cookie
// each. spec holds the programs of variant v only (see KeepPrograms);
// opts.Variant is not looked at. The histogram maps are sized and the
// load-time settings made as Load does; the Tracer reports v as its
// variant. On any failure everything loaded so far is closed.
func LoadAttach(spec *ebpf.CollectionSpec, opts Options, v Variant, attach AttachFunc) (*Tracer, error) {
	if len(opts.Metrics) > maxMetrics {
		return nil, fmt.Errorf("%s: %d metrics, at most %d", opts.Name, len(opts.Metrics), maxMetrics)
	}
	return loadTracer(spec.Copy(), opts, v, probeLoadError, attach)
}

// probeLoadError is loadError for programs the kernel may refuse with
// EPERM for want of a feature rather than of privileges (a fentry program
// where there are no BPF trampolines): to a process that has the
// privileges, the error is ebpf.ErrNotSupported and says so, and does not
// match ErrPrivileges, so that the tracer goes on to its next variant.
func probeLoadError(tracer string, err error) error {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) && (errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission)) && CheckPrivileges() == nil {
		return fmt.Errorf("%w: the kernel refused the program though this process may load BPF: %v", ebpf.ErrNotSupported, err)
	}
	return loadError(tracer, err)
}

// AttachTracepoint attaches a tp_btf or raw_tp program, such as the fork
// and exit programs of follow.bpf.h, as its type says.
func AttachTracepoint(p *ebpf.Program, ps *ebpf.ProgramSpec) (link.Link, error) {
	switch ps.Type {
	case ebpf.Tracing:
		return link.AttachTracing(link.TracingOptions{Program: p})
	case ebpf.RawTracepoint:
		return link.AttachRawTracepoint(link.RawTracepointOptions{Name: ps.AttachTo, Program: p})
	}
	return nil, fmt.Errorf("program %s: type %s is not a tracepoint", ps.Name, ps.Type)
}

// KeepPrograms deletes from spec every program not named in keep; a name
// in keep that spec lacks is an error.
func KeepPrograms(spec *ebpf.CollectionSpec, keep ...string) error {
	want := make(map[string]bool, len(keep))
	var errs []error
	for _, name := range keep {
		want[name] = true
		if _, ok := spec.Programs[name]; !ok {
			errs = append(errs, fmt.Errorf("object has no program %s", name))
		}
	}
	for name := range spec.Programs {
		if !want[name] {
			delete(spec.Programs, name)
		}
	}
	return errors.Join(errs...)
}

// HasTracepoint reports whether the kernel's BTF, or kernelTypes when set
// (a cut that keeps the typedefs of the tracers' optional tracepoints),
// declares tracepoint tp: whether a tp_btf program can attach to it.
// cache, when set, shares the decoded BTF.
func HasTracepoint(cache *btf.Cache, kernelTypes *btf.Spec, tp string) bool {
	spec, err := kernelTypes, error(nil)
	switch {
	case spec != nil:
	case cache != nil:
		spec, err = cache.Kernel()
	default:
		spec, err = btf.LoadKernelSpec()
	}
	if err != nil {
		return false
	}
	_, err = spec.AnyTypeByName("btf_trace_" + tp)
	return err == nil
}
