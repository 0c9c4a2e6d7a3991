package kerneltypes_test

import (
	"errors"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
)

// cutOfThisKernel cuts this kernel's BTF for every object tailgate has.
func cutOfThisKernel(t *testing.T) (kernel, cut *btf.Spec, objs []*ebpf.CollectionSpec, raw []byte) {
	t.Helper()
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	objs, err = tracers.Objects()
	if err != nil {
		t.Fatal(err)
	}
	names := kerneltypes.Names(objs, kerneltypes.TracepointTypedefs(tracers.OptionalTracepoints())...)
	raw, _, err = kerneltypes.Cut(kernel, names)
	if err != nil {
		t.Fatal(err)
	}
	cut, err = kerneltypes.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	return kernel, cut, objs, raw
}

// Every CO-RE relocation of every program of every object comes out the
// same against the cut as against this kernel's whole BTF, and the cut is a
// small part of it.
func TestCutRelocatesAsTheKernel(t *testing.T) {
	kernel, cut, objs, raw := cutOfThisKernel(t)
	relos, poisoned := 0, 0
	for _, o := range objs {
		names := make([]string, 0, len(o.Programs))
		for name := range o.Programs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			var rs []*btf.CORERelocation
			for _, ins := range o.Programs[name].Instructions {
				if r := btf.CORERelocationMetadata(&ins); r != nil {
					rs = append(rs, r)
				}
			}
			if len(rs) == 0 {
				continue
			}
			want, werr := btf.CORERelocate(rs, []*btf.Spec{kernel}, o.ByteOrder, o.Types.TypeID)
			got, gerr := btf.CORERelocate(rs, []*btf.Spec{cut}, o.ByteOrder, o.Types.TypeID)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s: against the kernel %v, against the cut %v", name, werr, gerr)
				continue
			}
			for i := range want {
				relos++
				if w, g := want[i].String(), got[i].String(); w != g {
					t.Errorf("%s: %s: against the kernel %s, against the cut %s", name, rs[i], w, g)
				}
				if strings.Contains(want[i].String(), "poison") {
					poisoned++
				}
			}
		}
	}
	if relos < 100 {
		t.Errorf("%d relocations compared, want the objects' hundreds", relos)
	}
	full := 0
	for range kernel.All() {
		full++
	}
	cutN := 0
	for range cut.All() {
		cutN++
	}
	if cutN*10 > full {
		t.Errorf("the cut holds %d types of the kernel's %d, want under a tenth", cutN, full)
	}
	t.Logf("%d relocations (%d poisoned on this kernel, either way); the cut holds %d of %d types, %d KiB", relos, poisoned, cutN, full, len(raw)>>10)
}

// Every tracer this kernel can load loads against the cut (raw_tp where it
// would take tp_btf, which needs the kernel's own type IDs), the syscall
// tracer counts what this thread does, and the interference log loads.
func TestTracerLoadsAgainstTheCut(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	_, cut, _, _ := cutOfThisKernel(t)
	for _, k := range tracers.All {
		tr, err := k.New(k.Probe, tracing.TracerOptions{TGID: uint32(os.Getpid()), KernelTypes: cut})
		if errors.Is(err, ebpf.ErrNotSupported) {
			continue // kfunc without fentry or kprobes here, as without the cut
		}
		if err != nil {
			t.Errorf("%s against the cut: %v", k.Name, err)
			continue
		}
		if tr.Variant() == tracing.TPBTF {
			t.Errorf("%s against the cut attached tp_btf, which needs the kernel's own type IDs", k.Name)
		}
		if k.Name == "syscall" {
			countGetppid(t, tr)
		}
		tr.Close()
	}
	l, err := tracers.LoadInterference(tracing.TracerOptions{KernelTypes: cut})
	if err != nil {
		t.Fatalf("interference log against the cut: %v", err)
	}
	l.Close()
}

func countGetppid(t *testing.T, tr *tracing.Tracer) {
	t.Helper()
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	runtime.LockOSThread()
	for range n {
		unix.Getppid()
	}
	runtime.UnlockOSThread()
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	h, ok := hs["syscall.getppid"]
	if !ok {
		t.Fatalf("syscall tracer's probe does not count getppid: %v", hs)
	}
	if got := h.Count(); got < n || got > n+200 {
		t.Errorf("getppid counted %d against the cut, made %d", got, n)
	}
}

func TestReadVmlinuxNotKernel(t *testing.T) {
	if _, err := kerneltypes.ReadVmlinux("kerneltypes.go"); err == nil {
		t.Error("a Go file read as a kernel image")
	}
	if _, err := kerneltypes.ReadVmlinux("testdata/none"); err == nil {
		t.Error("a missing file read as a kernel image")
	}
}
