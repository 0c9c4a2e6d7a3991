package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/tracers"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// guestRun, run here as a guest would run it: with the host's cut of this
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
		res, err := guestRun(context.Background(), vmtest.GuestRequest{Scenarios: []json.RawMessage{b}, KernelTypes: tc.path}, func(s string) { lines = append(lines, s) })
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
