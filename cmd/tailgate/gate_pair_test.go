package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/result"
)

func runGateWith(env matrixEnv, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = exitCode(runGate(context.Background(), args, &o, &e, env))
	return code, o.String(), e.String()
}

// A same-job gate runs base and head in alternating rounds: A B, B A, ...
func TestGatePairAlternatesRounds(t *testing.T) {
	f := &fakeExec{}
	code, _, stderr := runGateWith(f.env(fakeSysctls(t)), "syscall-read", "--variant", "A", "--variant", "B", "--trials", "4")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		"A:syscall-read", "B:syscall-read", "B:syscall-read", "A:syscall-read",
		"A:syscall-read", "B:syscall-read", "B:syscall-read", "A:syscall-read",
	}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "stopped after 4 rounds") {
		t.Errorf("stderr does not say how many rounds ran and why it stopped:\n%s", stderr)
	}
}

// Identical targets are decided "no change" at the first look, and the
// gate stops there instead of running to its cap.
func TestGatePairStopsWhenDecided(t *testing.T) {
	f := &fakeExec{}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runGateWith(f.env(fakeSysctls(t)), "syscall-read", "--variant", "A", "--variant", "B", "-o", out)
	if code != exitPass {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	if len(f.calls) != 12 || !strings.Contains(stderr, "stopped after 6 rounds") || !strings.Contains(stderr, "every gated test decided") {
		t.Errorf("%d trials run; want 6 rounds of 2, stopped at the first look:\n%s", len(f.calls), stderr)
	}
	if !strings.Contains(stdout, "run:       6 rounds in") || !strings.Contains(stdout, "every gated test is decided") {
		t.Errorf("the report does not say how the run went:\n%s", stdout)
	}
	for _, name := range []string{"r-A.json", "r-B.json"} {
		r, err := result.Load(filepath.Join(filepath.Dir(out), name))
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Find("syscall-read"); s == nil || s.Trials != 6 {
			t.Errorf("%s: want 6 trials of syscall-read, got %+v", name, s)
		}
	}
}

// A head 50% slower is a regression, confirmed at the first look.
func TestGatePairCatchesSlowdown(t *testing.T) {
	f := &fakeExec{scales: map[string]float64{"B": 1.5}}
	code, stdout, stderr := runGateWith(f.env(fakeSysctls(t)), "syscall-read", "--variant", "A", "--variant", "B")
	if code != exitRegression {
		t.Fatalf("exit %d, want 1: %s\n%s", code, stdout, stderr)
	}
	if len(f.calls) != 12 {
		t.Errorf("%d trials run, want 12: the regression is confirmed at the first look\n%s", len(f.calls), stderr)
	}
	if !strings.Contains(stdout, "REGRESSION") && !strings.Contains(stdout, "regression") {
		t.Errorf("report does not name the regression:\n%s", stdout)
	}
}

// The budget ends a run that cannot decide: what is open is inconclusive,
// and the gate says the budget is why it stopped.
func TestGatePairBudget(t *testing.T) {
	f := &fakeExec{}
	code, _, stderr := runGateWith(f.env(fakeSysctls(t)), "syscall-read", "--variant", "A", "--variant", "B", "--budget", "1ns")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(f.calls) != 2 || !strings.Contains(stderr, "budget is spent") {
		t.Errorf("%d trials; want one round, then the budget named as the reason:\n%s", len(f.calls), stderr)
	}
}

func TestGatePairBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"syscall-read", "--variant", "A", "--variant", "B", "--baseline", "x"},
		{"syscall-read", "--variant", "A"},
		{"syscall-read", "--variant", "A", "--variant", "B", "--variant", "C"},
		{"syscall-read", "--variant", "A", "--variant", "A"},
		{"syscall-read", "--variant", "A", "--variant", "B:no.such.key=1"},
		{"syscall-read", "--variant", "A", "--variant", "B", "--budget", "0s"},
		{"syscall-read", "--variant", "A", "--variant", "B", "-o", "-"},
		{"syscall-read", "--variant", "A", "--variant", "B", "-o", "/nonexistent-dir/r.json"},
		{"syscall-read"},
	} {
		f := &fakeExec{}
		code, _, stderr := runGateWith(f.env(fakeSysctls(t)), args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 && !strings.Contains(stderr, "tailgate gate") {
			t.Errorf("%v: exit %d, want 2 with one line: %s", args, code, stderr)
		}
		if len(f.calls) > 0 {
			t.Errorf("%v: ran %v before refusing", args, f.calls)
		}
	}
}

func TestLookRounds(t *testing.T) {
	got := gateLooks.Rounds(200)
	want := []int{6, 9, 12, 17, 24, 33, 46, 64, 89, 124, 174}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("looks (-want +got):\n%s", diff)
	}
	if got := gateLooks.Rounds(5); len(got) != 0 {
		t.Errorf("a run capped at 5 rounds looks at %v, want never (the final look is the budget's)", got)
	}
}
