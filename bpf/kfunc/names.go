package kfunc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// ErrUnknownFunction is what an *UnknownFunctionError is: a function the
// kernel does not have. It is bad input (tailgate exits 2), not a failure
// to attach; the error matches tracing.ErrBadTarget too.
var ErrUnknownFunction = errors.New("no such kernel function")

// UnknownFunctionError names a function the kernel has neither in its BTF
// nor in its symbol table, and the nearest names it has.
type UnknownFunctionError struct {
	Function string
	Near     []string // nearest first; empty when nothing is close
}

func (e *UnknownFunctionError) Error() string {
	msg := fmt.Sprintf("kfunc: the kernel has no function %q", e.Function)
	if len(e.Near) > 0 {
		return msg + "; near: " + strings.Join(e.Near, ", ")
	}
	return msg + " (none of its BTF or kallsyms names is near)"
}

// Is matches ErrUnknownFunction and tracing.ErrBadTarget.
func (e *UnknownFunctionError) Is(target error) bool {
	return target == ErrUnknownFunction || target == tracing.ErrBadTarget
}

// nameRE is what a kernel function's name may look like: a C identifier,
// or a compiler's clone of one (foo.isra.0, foo.cold) as kallsyms lists.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`)

// validate checks the list itself: names well formed, not repeated, not
// more than the histogram holds.
func validate(functions []string) error {
	if len(functions) == 0 {
		return errors.New("kfunc: no functions configured")
	}
	if len(functions) > maxFunctions {
		return fmt.Errorf("kfunc: %d functions, at most %d per tracer", len(functions), maxFunctions)
	}
	for i, fn := range functions {
		if !nameRE.MatchString(fn) {
			return fmt.Errorf("kfunc: %q is not a kernel function name", fn)
		}
		if slices.Contains(functions[:i], fn) {
			return fmt.Errorf("kfunc: %q listed twice", fn)
		}
	}
	return nil
}

// resolution says how a kernel knows each function.
type resolution struct {
	noBTF []string // functions its symbol table lists but its BTF does not describe
}

// resolve looks functions up in spec (nil for none) and, for those it
// lacks, in the symbol table kallsyms opens (nil for none). A function in
// neither is an *UnknownFunctionError.
func resolve(functions []string, spec *btf.Spec, kallsyms func() (io.ReadCloser, error)) (resolution, error) {
	var res resolution
	var missing []string
	for _, fn := range functions {
		if !hasBTFFunc(spec, fn) {
			missing = append(missing, fn)
		}
	}
	if len(missing) == 0 {
		return res, nil
	}
	var syms map[string]bool
	var symErr error
	if kallsyms != nil {
		syms, symErr = readKallsyms(kallsyms)
	}
	for _, fn := range missing {
		if syms[fn] {
			res.noBTF = append(res.noBTF, fn)
			continue
		}
		if spec == nil && syms == nil {
			return res, fmt.Errorf("kfunc: cannot tell whether the kernel has %s: no BTF, and kallsyms: %v", fn, symErr)
		}
		return res, &UnknownFunctionError{Function: fn, Near: near(fn, spec, syms)}
	}
	return res, nil
}

func hasBTFFunc(spec *btf.Spec, name string) bool {
	if spec == nil {
		return false
	}
	types, err := spec.AnyTypesByName(name)
	if err != nil {
		return false
	}
	for _, t := range types {
		if _, ok := t.(*btf.Func); ok {
			return true
		}
	}
	return false
}

// near returns the names nearest to fn among spec's functions and syms.
// The kernel's own entry points of a name come first: "clone" and "read"
// are most likely meant as the syscall's (kernel_clone, vfs_read,
// __x64_sys_clone), which plain spelling distance ranks below clone_mnt.
func near(fn string, spec *btf.Spec, syms map[string]bool) []string {
	var names []string
	if spec != nil {
		for t, err := range spec.All() {
			if err != nil {
				break
			}
			if f, ok := t.(*btf.Func); ok {
				names = append(names, f.Name)
			}
		}
	}
	for s := range syms {
		names = append(names, s)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var out []string
	for _, prefix := range entryPrefixes {
		if _, ok := slices.BinarySearch(names, prefix+fn); ok {
			out = append(out, prefix+fn)
		}
	}
	for _, n := range suggest.Near(fn, names, maxNear) {
		if len(out) < maxNear && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// maxNear is how many near names an error lists.
const maxNear = 6

// entryPrefixes make, from a syscall's name, the kernel functions it
// enters through, the common work first.
var entryPrefixes = []string{"vfs_", "kernel_", "ksys_", "do_sys_", "__do_sys_", "__x64_sys_", "__arm64_sys_"}

// readKallsyms reads the code symbols of a symbol table in the format of
// /proc/kallsyms and System.map ("ffffffff81000000 T name [module]").
// Addresses may be hidden (zero); names are what count here.
func readKallsyms(open func() (io.ReadCloser, error)) (map[string]bool, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		switch fields[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		name := fields[2]
		// Padding and CFI stubs before functions are not functions.
		if strings.HasPrefix(name, "__pfx_") || strings.HasPrefix(name, "__cfi_") {
			continue
		}
		syms[name] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return syms, nil
}

func openProcKallsyms() (io.ReadCloser, error) { return os.Open("/proc/kallsyms") }

// Check reports whether a kernel has each of functions, without loading
// anything: spec is the kernel's BTF (nil for none) and kallsyms its symbol
// table, in the format of /proc/kallsyms or System.map (nil for none). A
// function in neither is an *UnknownFunctionError naming near matches. It
// lets a caller check a VM's kernel (the BTF of its vmlinux) before
// booting it; New checks the running kernel itself.
func Check(functions []string, spec *btf.Spec, kallsyms io.Reader) error {
	if err := validate(functions); err != nil {
		return err
	}
	var open func() (io.ReadCloser, error)
	if kallsyms != nil {
		open = func() (io.ReadCloser, error) { return io.NopCloser(kallsyms), nil }
	}
	_, err := resolve(functions, spec, open)
	return err
}
