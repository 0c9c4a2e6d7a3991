package kfunc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/vm"
)

// vmKernels are the Debian kernels the VM test boots: both lines Debian
// carries.
var vmKernels = []string{"debian:6.1-cloud", "debian:6.12-cloud"}

// needQEMU skips with -short, and without what booting a Debian guest
// needs (testenv.DebianGuest; under TAILGATE_CI_STRICT a missing QEMU fails).
func needQEMU(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots VMs; skipped with -short")
	}
	testenv.DebianGuest(t)
}

var (
	resolvedMu sync.Mutex
	resolved   = map[string]*kernels.Kernel{}
)

// resolveKernel fetches a Debian kernel into the user cache, once.
func resolveKernel(t *testing.T, spec string) *kernels.Kernel {
	t.Helper()
	needQEMU(t)
	resolvedMu.Lock()
	defer resolvedMu.Unlock()
	if k := resolved[spec]; k != nil {
		return k
	}
	c, err := kernels.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	c.Progress = func(s string) { t.Log(s) }
	k, err := c.Resolve(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	resolved[spec] = k
	return k
}

var (
	guestOnce sync.Once
	guestPath string
	guestErr  error
)

// buildGuest builds testdata/guest, static, once.
func buildGuest(t *testing.T) string {
	t.Helper()
	guestOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kfunc-guest-")
		if err != nil {
			guestErr = err
			return
		}
		guestPath = filepath.Join(dir, "guest")
		cmd := exec.Command("go", "build", "-o", guestPath, "./testdata/guest")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			guestErr = &exec.Error{Name: "go build ./testdata/guest", Err: err}
			t.Logf("%s", out)
		}
	})
	if guestErr != nil {
		t.Fatal(guestErr)
	}
	return guestPath
}

// TestVariantsInDebianVM boots Debian kernels, where both fentry and
// kprobes work, and runs the tracer there with each variant forced and
// with its own pick (testdata/guest): every read and clone of the workload
// is counted, the reads of a process it does not follow are not, and a
// misspelt function is an *UnknownFunctionError.
func TestVariantsInDebianVM(t *testing.T) {
	for _, spec := range vmKernels {
		t.Run(spec, func(t *testing.T) {
			k := resolveKernel(t, spec)
			guest := buildGuest(t)
			// The functions are checked on the host first, against the
			// guest kernel's own BTF, as a run would before booting.
			bspec, err := kerneltypes.ReadVmlinux(k.Vmlinux)
			if err != nil {
				t.Fatal(err)
			}
			if err := kfunc.Check([]string{"vfs_read", "kernel_clone"}, bspec, nil); err != nil {
				t.Fatal(err)
			}
			if err := kfunc.Check([]string{"vfs_raed"}, bspec, nil); !errors.Is(err, kfunc.ErrUnknownFunction) || !strings.Contains(err.Error(), "near: vfs_read") {
				t.Errorf("vfs_raed against the BTF of %s: %v", k.Vmlinux, err)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // the VM's run directory, to find its QEMU
			setup, err := vm.Settings{VCPUs: 2, Clock: vm.ClockReal, MemMiB: 512}.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			m := vm.Machine{Name: "kfunc", Kernel: k, Init: guest, Setup: setup, Deadline: 5 * time.Minute}
			res, err := vm.Run(context.Background(), m, vm.GuestRequest{}, func(s string) { t.Log(s) })
			if out, _ := exec.Command("pgrep", "-a", "-f", "qemu-system.*"+tmp).Output(); len(out) > 0 {
				t.Errorf("QEMU left running: %s", out)
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimPrefix(k.Spec, "debian:"); res.Environment.KernelRelease != want {
				t.Errorf("guest kernel %q, want %q", res.Environment.KernelRelease, want)
			}
			variant := func(name string) string {
				s := res.Find(name)
				if s == nil || len(s.Tracers) != 1 {
					t.Fatalf("no %s in the guest's result", name)
				}
				return s.Tracers[0].Variant
			}
			// Debian's kernels have BPF trampolines and cookies for them.
			if v := variant("kfunc-probe"); v != string(kfunc.Fentry) {
				t.Errorf("Probe picked %s, want fentry", v)
			}
			for _, tc := range []struct{ scenario, variant string }{
				{"kfunc-auto", "fentry"},
				{"kfunc-fentry", "fentry"},
				{"kfunc-kprobe", "kprobe"},
			} {
				t.Run(tc.scenario, func(t *testing.T) {
					if v := variant(tc.scenario); v != tc.variant {
						t.Errorf("attached as %s, want %s", v, tc.variant)
					}
					s := res.Find(tc.scenario)
					reads, clones := s.Metrics["kfunc.vfs_read"], s.Metrics["kfunc.kernel_clone"]
					if reads == nil || clones == nil || len(reads.Trials) != 1 || len(clones.Trials) != 1 {
						t.Fatalf("metrics %v", s.Metrics)
					}
					r, c := reads.Trials[0], clones.Trials[0]
					t.Logf("vfs_read: %d counted for %d reads, p50 %.0f ns, p99 %.0f ns", r.Summary.Count, r.Ops, r.Summary.P50, r.Summary.P99)
					t.Logf("kernel_clone: %d counted for %d processes started, p50 %.0f ns", c.Summary.Count, c.Ops, c.Summary.P50)
					// Each process started reads a few files as the Go
					// runtime starts; the reader's 5000 are not ours.
					if r.Summary.Count < r.Ops || r.Summary.Count > r.Ops+1000 {
						t.Errorf("vfs_read counted %d for %d reads of the traced process (and 5000 of another)", r.Summary.Count, r.Ops)
					}
					// The children are followed, and their runtimes start
					// threads.
					if c.Summary.Count < c.Ops || c.Summary.Count > 20*c.Ops {
						t.Errorf("kernel_clone counted %d for %d processes started", c.Summary.Count, c.Ops)
					}
					if r.Summary.P50 <= 0 || r.Summary.P50 > 1e6 || c.Summary.P50 <= r.Summary.P50 {
						t.Errorf("p50 of vfs_read %.0f ns, of kernel_clone %.0f ns: not a 4 KiB read and a clone", r.Summary.P50, c.Summary.P50)
					}
				})
			}
		})
	}
}
