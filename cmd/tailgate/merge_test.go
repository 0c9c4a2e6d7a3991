package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestShardRunsMerge runs the built-ins as three shards and merges them:
// every scenario exactly once.
func TestShardRunsMerge(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := 1; i <= 3; i++ {
		out := filepath.Join(dir, "shard"+string(rune('0'+i))+".json")
		code, _, stderr := runInProcess(t, "run", "--shard", string(rune('0'+i))+"/3", "--trials", "1", "--duration", "100ms", "--warmup", "0s", "-o", out)
		if code != 0 {
			t.Fatalf("shard %d/3: exit %d: %s", i, code, stderr)
		}
		files = append(files, out)
	}
	merged := filepath.Join(dir, "merged.json")
	code, _, stderr := runInProcess(t, append([]string{"merge", "-o", merged}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	r, err := result.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, s := range r.Scenarios {
		got = append(got, s.Name)
	}
	// Scenarios this kernel cannot trace (kfunc without fentry or kprobes)
	// are passed over, and the merged Result still says so.
	skipped := map[string]bool{}
	for _, sk := range r.Skipped {
		skipped[sk.Scenario] = true
	}
	_, kerr := kfunc.Probe()
	for _, s := range scenarios.Builtin() {
		_, usesKfunc := s.Tracers["kfunc"]
		if usesKfunc && kerr != nil {
			if !skipped[s.Name] {
				t.Errorf("%s needs kfunc, which this kernel lacks (%v), but is not in the merged Result's skipped %v", s.Name, kerr, r.Skipped)
			}
			continue
		}
		if skipped[s.Name] {
			t.Errorf("%s was skipped: %v", s.Name, r.Skipped)
		}
		want = append(want, s.Name)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("merged scenarios %v, want each built-in once: %v", got, want)
	}
}

func TestMergeRefusesOtherKernel(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	r := &result.Result{Schema: result.SchemaVersion, Target: result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0"}}
	result.Write(a, r)
	r.Environment.KernelRelease = "6.12.0"
	result.Write(b, r)
	code, _, stderr := runInProcess(t, "merge", a, b)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, s := range []string{a, b, "kernel_release"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("error does not name %q: %s", s, stderr)
		}
	}
}

func TestDoctorOnThisMachine(t *testing.T) {
	code, stdout, stderr := runInProcess(t, "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s%s", code, stdout, stderr)
	}
	// The table keeps to 100 columns: its lines are read joined.
	flat := strings.Join(strings.Fields(stdout), " ")
	for _, s := range []string{"syscall tracer", "sched tracer", "and attaches (", "groups can be made and removed under /sys/fs/cgroup"} {
		if !strings.Contains(flat, s) {
			t.Errorf("doctor output lacks %q:\n%s", s, stdout)
		}
	}
}

// TestMergeRefusesCopiedResult: a byte-identical copy of a Result under
// another name (which result.MergeFiles cannot tell from another run) would
// count its trials twice: exit 2, in one line naming both files.
func TestMergeRefusesCopiedResult(t *testing.T) {
	dir := t.TempDir()
	a := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "a.json")
	b, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "copy.json")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	other := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "other.json")
	code, _, stderr := cli("merge", a, other, cp, "-o", filepath.Join(dir, "m.json"))
	if code != exitUsage || !strings.Contains(stderr, a) || !strings.Contains(stderr, cp) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, want %d and one line naming %s and %s:\n%s", code, exitUsage, a, cp, stderr)
	}
	if code, _, stderr := cli("merge", a, other, "-o", filepath.Join(dir, "m.json")); code != 0 {
		t.Errorf("two runs: exit %d\n%s", code, stderr)
	}
}
