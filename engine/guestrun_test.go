package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// GuestRun, run here as a guest would run it: with the host's cut of this
// kernel's BTF the tracers attach raw_tp; with a cut it cannot read it
// says so in a line and relocates against the kernel's own BTF (tp_btf
// here), and the run goes on.
func TestGuestRunKernelTypes(t *testing.T) {
	sc, err := scenarios.Parse("g.yaml", []byte("name: g\nworkload: {kind: syscall, syscall: getppid}\ntracers: {syscall: {}}\ntrials: 1\nwarmup: 0s\nduration: 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tracers.Objects()
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := kerneltypes.Cut(kernel, kerneltypes.Names(objs, kerneltypes.TracepointTypedefs(interfere.OptionalTracepoints)...))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "cut.btf"), filepath.Join(dir, "bad.btf")
	if err := os.WriteFile(good, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not BTF"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, variant string
		saysUnusable  bool
	}{
		{good, "raw_tp", false},
		{bad, "tp_btf", true},
	} {
		var lines []string
		res, err := GuestRun(context.Background(), vm.GuestRequest{Scenarios: []json.RawMessage{b}, KernelTypes: tc.path}, func(s string) { lines = append(lines, s) })
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		s := res.Find("g")
		if s == nil || len(s.Tracers) != 1 || s.Tracers[0].Variant != tc.variant {
			t.Errorf("%s: tracers %+v, want syscall as %s", tc.path, s, tc.variant)
		}
		said := strings.Contains(strings.Join(lines, "\n"), "unusable")
		if said != tc.saysUnusable {
			t.Errorf("%s: lines %q; want a line saying the cut is unusable: %v", tc.path, lines, tc.saysUnusable)
		}
	}
}

// Every kernel with a vmlinux gets a cut of its BTF: a cached one's and a
// bzImage's (whose vmlinux the cache extracted) kept beside the vmlinux,
// an ELF given as a path's in a temporary file that goes with the run.
func TestKernelTypesFor(t *testing.T) {
	testenv.DebianGuest(t)
	cache, err := kernels.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	k, err := cache.Resolve(t.Context(), "debian:6.1-cloud")
	if err != nil {
		t.Fatal(err)
	}
	if k.Vmlinux == "" {
		t.Fatalf("debian:6.1-cloud resolved without a vmlinux: %+v", k)
	}
	check := func(what, path string) {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := kerneltypes.Load(raw); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	var lines []string
	line := func(s string) { lines = append(lines, s) }

	// A bzImage's vmlinux, extracted into a directory of the cache.
	dir := t.TempDir()
	vml := filepath.Join(dir, "vmlinux")
	if err := os.Symlink(k.Vmlinux, vml); err != nil {
		t.Fatal(err)
	}
	path, done := kernelTypesFor(&kernels.Kernel{Image: "/some/bzImage", Vmlinux: vml}, line)
	done()
	if filepath.Dir(path) != dir {
		t.Errorf("a bzImage's cut at %q, want it kept beside its vmlinux in %s (%q)", path, dir, lines)
	}
	check("kept cut", path)
	if again, _ := kernelTypesFor(&kernels.Kernel{Image: "/some/bzImage", Vmlinux: vml}, line); again != path || len(lines) != 1 {
		t.Errorf("second call: %q and lines %q, want the kept %q and no second cut", again, lines, path)
	}

	// An ELF kernel given as a path: nothing is written beside it.
	path, done = kernelTypesFor(&kernels.Kernel{Image: vml, Vmlinux: vml}, line)
	if path == "" || filepath.Dir(path) == dir {
		t.Fatalf("an ELF path's cut at %q, want a temporary file (%q)", path, lines)
	}
	check("temporary cut", path)
	done()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the temporary cut %s outlives the run: %v", path, err)
	}

	// A bzImage booted as it is has nothing to cut.
	if path, _ := kernelTypesFor(&kernels.Kernel{Image: "/some/bzImage"}, line); path != "" {
		t.Errorf("no vmlinux, yet a cut at %q", path)
	}
}

// A cut of another build beside the kernel stays while that build may be
// reading it (a run beside this one on the same cache), and goes once
// unused for staleKernelTypes.
func TestWriteKernelTypesKeepsOthersInUse(t *testing.T) {
	dir := t.TempDir()
	fresh, stale := filepath.Join(dir, "kernel-types-aaaa.btf"), filepath.Join(dir, "kernel-types-bbbb.btf")
	for _, p := range []string{fresh, stale} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleKernelTypes)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := writeKernelTypes(filepath.Join(dir, "kernel-types-cccc.btf"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("another build's cut in use was removed: %v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("another build's stale cut was kept")
	}
}
