package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// stubRunner replaces the runner for one test: each call returns the next
// of runs, and counts the calls.
func stubRunner(t *testing.T, runs ...fakeRun) *int {
	t.Helper()
	calls := new(int)
	saved := runScenarios
	t.Cleanup(func() { runScenarios = saved })
	runScenarios = func(ctx context.Context, req runner.Request) (*result.Result, error) {
		if *calls >= len(runs) {
			t.Fatalf("runner called %d times, want %d", *calls+1, len(runs))
		}
		r := runs[*calls].result()
		*calls++
		return r, nil
	}
	return calls
}

func TestGate(t *testing.T) {
	store := filepath.Join(t.TempDir(), "baselines")
	steadyRun := func(seed uint64) fakeRun { return fakeRun{scenario: "syscall-read", scales: steady, seed: seed} }
	slowRun := fakeRun{scenario: "syscall-read", scales: []float64{1.4, 1.41, 1.39, 1.4, 1.4}, seed: 50}

	t.Run("no baseline: how to make one, before running", func(t *testing.T) {
		calls := stubRunner(t)
		code, _, stderr := cli("gate", "syscall-read", "--baseline", store)
		if code != 2 || !strings.Contains(stderr, "--save-baseline") || *calls != 0 {
			t.Errorf("exit %d, %d runs, stderr:\n%s", code, *calls, stderr)
		}
	})
	t.Run("no --baseline", func(t *testing.T) {
		if code, _, stderr := cli("gate", "syscall-read"); code != 2 || !strings.Contains(stderr, "or a stored --baseline DIR|FILE") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("save the first baseline and pass", func(t *testing.T) {
		stubRunner(t, steadyRun(1))
		code, stdout, stderr := cli("gate", "syscall-read", "--baseline", store, "--save-baseline")
		if code != 0 || !strings.Contains(stderr, "saved as its baseline") || !strings.Contains(stdout, "this run is now the baseline") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if _, err := baseline.Load(store, "syscall-read", "host", "6.1.0-test"); err != nil {
			t.Error(err)
		}
	})
	t.Run("pass", func(t *testing.T) {
		stubRunner(t, steadyRun(2))
		code, stdout, stderr := cli("gate", "syscall-read", "--baseline", store, "--format", "markdown")
		if code != 0 || !strings.HasPrefix(stdout, "No regressions in 1 gated percentile") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("regression does not refresh the baseline", func(t *testing.T) {
		path := filepath.Join(store, baseline.FileName("syscall-read", "host", "6.1.0-test"))
		before := mustRead(t, path)
		stubRunner(t, slowRun)
		code, stdout, stderr := cli("gate", "syscall-read", "--baseline", store, "--save-baseline")
		if code != 1 || !strings.Contains(stdout, "REGRESSION") || !strings.Contains(stderr, "not refreshed") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if mustRead(t, path) != before {
			t.Error("a failing gate refreshed the baseline")
		}
	})
	t.Run("a pass refreshes the baseline", func(t *testing.T) {
		path := filepath.Join(store, baseline.FileName("syscall-read", "host", "6.1.0-test"))
		before := mustRead(t, path)
		stubRunner(t, steadyRun(3))
		code, _, stderr := cli("gate", "syscall-read", "--baseline", store, "--save-baseline")
		if code != 0 || !strings.Contains(stderr, "baseline written to "+path) {
			t.Errorf("exit %d\nstderr:\n%s", code, stderr)
		}
		if mustRead(t, path) == before {
			t.Error("a passing gate with --save-baseline did not refresh the baseline")
		}
	})
	t.Run("corrupt baseline: exit 2 before running", func(t *testing.T) {
		bad := t.TempDir()
		path := filepath.Join(bad, baseline.FileName("syscall-read", "host", "6.1.0-test"))
		os.WriteFile(path, []byte("{\"schema\":"), 0o644)
		calls := stubRunner(t)
		code, _, stderr := cli("gate", "syscall-read", "--baseline", bad, "--save-baseline")
		if code != 2 || !strings.Contains(stderr, path) || *calls != 0 {
			t.Errorf("exit %d, %d runs, stderr:\n%s", code, *calls, stderr)
		}
	})
	t.Run("single baseline file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "base.json")
		stubRunner(t, steadyRun(4), slowRun)
		if code, _, stderr := cli("gate", "syscall-read", "--baseline", file, "--save-baseline"); code != 0 {
			t.Fatalf("first run: exit %d: %s", code, stderr)
		}
		if _, err := result.Load(file); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := cli("gate", "syscall-read", "--baseline", file); code != 1 {
			t.Errorf("second run: exit %d, want 1: %s", code, stderr)
		}
	})
	t.Run("single file keeps scenarios the run did not measure", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "base.json")
		if err := result.Write(file, steadyRun(5).result()); err != nil {
			t.Fatal(err)
		}
		before := mustRead(t, file)
		stubRunner(t, fakeRun{scenario: "pipe-pingpong", scales: steady, seed: 6})
		code, _, stderr := cli("gate", "pipe-pingpong", "--baseline", file, "--save-baseline")
		if code != 2 || !strings.Contains(stderr, "also holds syscall-read") {
			t.Errorf("exit %d: %s", code, stderr)
		}
		if mustRead(t, file) != before {
			t.Error("the baseline file was replaced")
		}
	})
}

func TestCalibrate(t *testing.T) {
	stubRunner(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 1}, fakeRun{scenario: "syscall-read", scales: steady, seed: 2},
		fakeRun{scenario: "syscall-read", scales: []float64{1.2, 1.21, 1.19, 1.2, 1.2}, seed: 3})
	store := filepath.Join(t.TempDir(), "baselines")
	code, stdout, stderr := cli("calibrate", "syscall-read", "--trials", "5", "--runs", "3", "--baseline", store)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Between-run spread on host", "3 separate runs", "run 3 of 3", "calibration written to"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, stdout, stderr)
		}
	}
	cal, err := engine.Store{Path: store}.LoadCalibration("host", "6.1.0-test")
	if err != nil || cal == nil {
		t.Fatalf("stored calibration: %v, %v", cal, err)
	}
	// One run of three 20% slower than the others: the spread between
	// runs is real and stored.
	sd, ok := cal.Excess("syscall-read", "syscall.read", "p99")
	if !ok || sd < 0.05 {
		t.Errorf("excess between-run sd of syscall.read p99 = %v (%v), want ≥ 0.05 from runs 20%% apart", sd, ok)
	}
	if code, _, _ := cli("calibrate", "syscall-read", "--runs", "1"); code != 2 {
		t.Errorf("--runs 1: exit %d, want 2", code)
	}
}

func TestGateCandidate(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	steady2 := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "steady.json")
	slow := fakeRun{scenario: "syscall-read", scales: []float64{1.4, 1.41, 1.39, 1.4, 1.4}, seed: 50}.write(t, dir, "slow.json")
	calls := stubRunner(t) // --candidate never runs

	t.Run("no baseline yet", func(t *testing.T) {
		if code, _, stderr := cli("gate", "--candidate", steady2, "--baseline", store); code != 2 || !strings.Contains(stderr, "--save-baseline") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("save the first baseline", func(t *testing.T) {
		code, stdout, stderr := cli("gate", "--candidate", steady2, "--baseline", store, "--save-baseline")
		if code != 0 || !strings.Contains(stdout, "this run is now the baseline") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("pass", func(t *testing.T) {
		same := fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.write(t, dir, "same.json")
		if code, stdout, stderr := cli("gate", "--candidate", same, "--baseline", store); code != 0 || !strings.HasPrefix(stdout, "No regressions") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("regression, annotations", func(t *testing.T) {
		md := filepath.Join(dir, "report.md")
		code, stdout, stderr := cli("gate", "--candidate", slow, "--baseline", store, "--format", "github", "--format", "markdown="+md)
		if code != 1 || !strings.Contains(stdout, "::error title=tailgate%3A syscall-read syscall.read p99 regression::") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if first, _, _ := strings.Cut(mustRead(t, md), "\n"); !strings.HasSuffix(first, "regression in 1 gated percentile.") {
			t.Errorf("markdown first line %q", first)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"scenarios too", []string{"syscall-read"}, "name no scenarios"},
		{"run flags", []string{"--trials", "3", "-o", filepath.Join(dir, "x.json")}, "-o, --trials only apply to a run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"gate", "--candidate", slow, "--baseline", store}, c.args...)
			if code, _, stderr := cli(args...); code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d: %s", code, stderr)
			}
		})
	}
	t.Run("unreadable candidate", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte("{"), 0o644)
		if code, _, stderr := cli("gate", "--candidate", bad, "--baseline", store); code != 2 || !strings.Contains(stderr, "candidate") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	if *calls != 0 {
		t.Errorf("--candidate ran the scenarios %d times", *calls)
	}
}
