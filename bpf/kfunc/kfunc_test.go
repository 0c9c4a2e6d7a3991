package kfunc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

func kernelBTF(t *testing.T) *btf.Spec {
	t.Helper()
	spec, err := btf.NewCache().Kernel()
	if err != nil {
		t.Fatalf("needs kernel BTF: %v", err)
	}
	return spec
}

// TestUnknownFunction asks the running kernel for a misspelt function:
// an *UnknownFunctionError naming the right one, before anything loads.
func TestUnknownFunction(t *testing.T) {
	_, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1}, Functions: []string{"vfs_read", "vfs_raed"}})
	var ue *UnknownFunctionError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnknownFunction) || !errors.Is(err, tracing.ErrBadTarget) {
		t.Fatalf("err = %v, want an *UnknownFunctionError", err)
	}
	if ue.Function != "vfs_raed" || len(ue.Near) == 0 || ue.Near[0] != "vfs_read" {
		t.Errorf("error %+v, want vfs_raed with vfs_read nearest", ue)
	}
	if s := err.Error(); !strings.Contains(s, `no function "vfs_raed"; near: vfs_read`) || strings.Contains(s, "\n") {
		t.Errorf("message %q", s)
	}
}

func TestCheck(t *testing.T) {
	spec := kernelBTF(t)
	kallsyms := "ffffffff81000000 T _stext\n" +
		"ffffffff81000100 t only_in_kallsyms.isra.0\n" +
		"0000000000000000 t hidden_address [some_module]\n" +
		"ffffffff81000200 D some_data\n" +
		"ffffffff81000300 t __pfx_padded\n"
	for _, tc := range []struct {
		name      string
		functions []string
		spec      *btf.Spec
		kallsyms  string
		near      []string // nil: no error
		wantErr   string
	}{
		{name: "in BTF", functions: []string{"vfs_read", "kernel_clone"}, spec: spec},
		{name: "in kallsyms only", functions: []string{"vfs_read", "only_in_kallsyms.isra.0", "hidden_address"}, spec: spec, kallsyms: kallsyms},
		{name: "data is not a function", functions: []string{"some_data"}, spec: spec, kallsyms: kallsyms, near: []string{}},
		{name: "padding is not a function", functions: []string{"__pfx_padded"}, spec: spec, kallsyms: kallsyms, near: []string{}},
		{name: "near in BTF", functions: []string{"kernel_clnoe"}, spec: spec, near: []string{"kernel_clone"}},
		{name: "entry points", functions: []string{"clone"}, spec: spec, near: []string{"kernel_clone", "__x64_sys_clone"}},
		{name: "entry points of read", functions: []string{"read"}, spec: spec, near: []string{"vfs_read", "ksys_read"}},
		{name: "near in kallsyms", functions: []string{"only_in_kalsyms.isra.0"}, kallsyms: kallsyms, near: []string{"only_in_kallsyms.isra.0"}},
		{name: "nothing to ask", functions: []string{"vfs_read"}, wantErr: "cannot tell whether the kernel has vfs_read"},
		{name: "none", wantErr: "no functions configured"},
		{name: "bad name", functions: []string{"vfs read"}, spec: spec, wantErr: `"vfs read" is not a kernel function name`},
		{name: "twice", functions: []string{"vfs_read", "vfs_read"}, spec: spec, wantErr: `"vfs_read" listed twice`},
		{name: "too many", functions: strings.Fields("a b c d e f g h i j k l m n o p q"), spec: spec, wantErr: "17 functions, at most 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.kallsyms != "" {
				err = Check(tc.functions, tc.spec, strings.NewReader(tc.kallsyms))
			} else {
				err = Check(tc.functions, tc.spec, nil)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrUnknownFunction) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if tc.near == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ue *UnknownFunctionError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want an *UnknownFunctionError", err)
			}
			for _, n := range tc.near {
				if !slices.Contains(ue.Near, n) {
					t.Errorf("near %v lacks %s", ue.Near, n)
				}
			}
			if len(tc.near) == 0 && len(ue.Near) > 0 && slices.Contains(ue.Near, tc.functions[0]) {
				t.Errorf("near %v names the function itself", ue.Near)
			}
		})
	}
}

func TestBadVariant(t *testing.T) {
	_, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1}, Functions: []string{"vfs_read"}, Variant: tracing.TPBTF})
	if err == nil || !strings.Contains(err.Error(), `variant "tp_btf"`) {
		t.Errorf("err = %v", err)
	}
}

// TestProbe: Probe picks fentry where it works, else kprobe, and where
// neither does (this CI host: no ftrace, no kprobes) says why for each,
// without claiming missing privileges.
func TestProbe(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatal(err)
	}
	fentry, kprobe := ProbeVariant(Fentry), ProbeVariant(Kprobe)
	t.Logf("fentry: %v", fentry)
	t.Logf("kprobe: %v", kprobe)
	v, err := Probe()
	switch {
	case fentry == nil:
		if v != Fentry || err != nil {
			t.Errorf("Probe() = %q, %v; fentry works", v, err)
		}
	case kprobe == nil:
		if v != Kprobe || err != nil {
			t.Errorf("Probe() = %q, %v; kprobe works and fentry does not", v, err)
		}
	default:
		// This host has no ftrace and no kprobes: an *UnsupportedError
		// (ebpf.ErrNotSupported, which tests skip on) says so.
		if v != "" || errors.Is(err, tracing.ErrPrivileges) {
			t.Errorf("Probe() = %q, %v; want an error naming both variants", v, err)
		}
		var ue *UnsupportedError
		if !errors.Is(err, ebpf.ErrNotSupported) || !errors.As(err, &ue) || len(ue.Errs) != 2 ||
			err.Error() != "kfunc: this kernel allows neither fentry (the kernel refuses trampoline programs) nor kprobe (no kprobe PMU, no kprobe_events in tracefs)" {
			t.Errorf("New on a kernel allowing neither variant: %v, want an *UnsupportedError", err)
		}
	}
}

// variantFeature is variant v as a test needs it of the running kernel.
// A kernel built without kprobes has none; whether it allows BPF
// trampolines only loading one tells (this host's kernel is built with
// direct calls and refuses them), so a skip of fentry is trusted.
func variantFeature(v tracing.Variant) testenv.Feature {
	f := testenv.Feature{Name: string(v), Use: func() error { return ProbeVariant(v) }}
	if v == Kprobe {
		f.Present = testenv.KernelConfig("CONFIG_KPROBES")
	}
	return f
}

// TestOnRunningKernel counts vfs_read and kernel_clone calls of this
// process with each variant the running kernel allows; TestInDebianVM
// does the same in a guest, where both variants work.
func TestOnRunningKernel(t *testing.T) {
	for _, v := range []tracing.Variant{Fentry, Kprobe} {
		t.Run(string(v), func(t *testing.T) {
			if err := ProbeVariant(v); err != nil {
				// This kernel lacks v (TestInDebianVM counts with it in a
				// guest): forcing it must fail as unsupported, not load.
				tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Functions: []string{"vfs_read"}, Variant: v})
				if err == nil {
					tr.Close()
					t.Fatalf("%s loaded though the probe said it cannot", v)
				}
				if !errors.Is(err, ebpf.ErrNotSupported) {
					t.Fatalf("forced %s where the kernel lacks it: %v, want ErrNotSupported", v, err)
				}
				testenv.Missing(t, variantFeature(v), err)
			}
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Functions: []string{"vfs_read", "kernel_clone"}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if tr.Variant() != v {
				t.Errorf("variant %s, want %s", tr.Variant(), v)
			}
			const reads, clones = 5000, 10
			f, err := os.Open("/dev/zero")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			runtime.LockOSThread()
			for range reads {
				if _, err := unix.Read(int(f.Fd()), buf); err != nil {
					t.Fatal(err)
				}
			}
			runtime.UnlockOSThread()
			for range clones {
				if err := exec.Command("true").Run(); err != nil {
					t.Fatal(err)
				}
			}
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			if n := hs["kfunc.vfs_read"].Count(); n < reads || n > reads+500 {
				t.Errorf("vfs_read counted %d, the test read %d times", n, reads)
			}
			if n := hs["kfunc.kernel_clone"].Count(); n < clones {
				t.Errorf("kernel_clone counted %d, the test started %d processes", n, clones)
			}
			ids := tr.ProgramIDs()
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := tracing.StillLoaded(ids, 5*time.Second); len(left) > 0 {
				t.Errorf("programs %v still loaded after Close", left)
			}
		})
	}
}
