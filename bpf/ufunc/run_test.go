package ufunc_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/ufunc"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestRunScenario runs testdata/ufunc-sleeper.yaml with the tailgate
// command, as a user would: the exec workload starts the C program in a
// cgroup of its own, and the tracer, configured from the scenario file,
// times its two functions in it.
func TestRunScenario(t *testing.T) {
	testenv.Need(t, testenv.Tool("cc", "Debian: gcc"))
	dir := t.TempDir()
	for _, f := range []string{"ufunc-sleeper.yaml", "sleeper.c", "sleeplib.c"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cc := exec.Command("cc", "-O2", "-g", "-o", "sleeper", "sleeper.c", "sleeplib.c")
	cc.Dir = dir
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "tailgate")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/tailgate")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "result.json")
	run := exec.Command(bin, "run", filepath.Join(dir, "ufunc-sleeper.yaml"), "-o", out)
	run.Env = append(os.Environ(), "CI=true")
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("tailgate run: %v\n%s", err, b)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Find("ufunc-sleeper")
	if s == nil || s.Trials != 3 || len(s.Tracers) != 1 || s.Tracers[0].Variant != string(ufunc.Uprobe) {
		t.Fatalf("scenario %+v", s)
	}
	for m, want := range map[string]uint64{"ufunc.sleeper:tg_sleep": 100, "ufunc.sleeper:tg_nop": 300} {
		mt := s.Metrics[m]
		if mt == nil || len(mt.Trials) != 3 {
			t.Fatalf("%s: %+v", m, mt)
		}
		for i, tr := range mt.Trials {
			if tr.Summary.Count != want {
				t.Errorf("%s trial %d: %d calls counted, the program made %d", m, i, tr.Summary.Count, want)
			}
		}
	}
	p50 := s.Metrics["ufunc.sleeper:tg_sleep"].Merged().Quantile(0.5)
	t.Logf("tg_sleep p50 %.0f ns over 3 trials", p50)
	if math.Abs(p50-2e6)/2e6 > 0.05 {
		t.Errorf("tg_sleep p50 %.0f ns, not within 5%% of 2 ms", p50)
	}
}

// TestRunGoScenario runs testdata/ufunc-gowork.yaml with the tailgate
// command: the exec workload starts a Go program in its cgroup, and the
// tracer times two of its functions at their entries and RETs. Every
// call of each trial is counted, and the program ends well (a crash is a
// failed run).
func TestRunGoScenario(t *testing.T) {
	testenv.Need(t, testenv.Platform("linux/amd64"))
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "ufunc-gowork.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ufunc-gowork.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tailgate")
	for out, pkg := range map[string]string{filepath.Join(dir, "gowork"): "./testdata/gowork", bin: "../../cmd/tailgate"} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	out := filepath.Join(dir, "result.json")
	run := exec.Command(bin, "run", filepath.Join(dir, "ufunc-gowork.yaml"), "-o", out)
	run.Env = append(os.Environ(), "CI=true")
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("tailgate run: %v\n%s", err, b)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Find("ufunc-gowork")
	if s == nil || s.Trials != 3 || len(s.Tracers) != 1 || s.Tracers[0].Variant != string(ufunc.Uprobe) {
		t.Fatalf("scenario %+v", s)
	}
	// Each of the 8 goroutines makes 25 calls of work and, at every
	// 10th, a call of nest(3): 3 times 4 calls of nest.
	for m, want := range map[string]uint64{"ufunc.gowork:main.work": 200, "ufunc.gowork:main.nest": 96} {
		mt := s.Metrics[m]
		if mt == nil || len(mt.Trials) != 3 {
			t.Fatalf("%s: %+v", m, mt)
		}
		for i, tr := range mt.Trials {
			if tr.Summary.Count != want {
				t.Errorf("%s trial %d: %d calls counted, the program made %d", m, i, tr.Summary.Count, want)
			}
		}
	}
	p50 := s.Metrics["ufunc.gowork:main.work"].Merged().Quantile(0.5)
	t.Logf("main.work p50 %.0f ns over 3 trials", p50)
	if p50 < 2e6 {
		t.Errorf("main.work p50 %.0f ns, shorter than the 2 ms it sleeps", p50)
	}
}
