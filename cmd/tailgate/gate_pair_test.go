package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

func runGateWith(env roundsEnv, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = exitCode(runGate(context.Background(), args, &o, &e, env))
	return code, o.String(), e.String()
}

// A same-job gate runs base and head once each per round, in an order
// drawn at random per round, and records on every trial its round and its
// place: what pairs the two sides and makes the sign-flip test exact.
func TestGatePairRandomOrder(t *testing.T) {
	f := &fakeExec{}
	out := filepath.Join(t.TempDir(), "r.json")
	const rounds = 12 // one look, at the end
	env := f.env(fakeSysctls(t))
	env.orderSeed = 3
	code, _, stderr := runGateWith(env, "syscall-read", "--variant", "A", "--variant", "B", "--trials", fmt.Sprint(rounds), "-o", out)
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(f.calls) != 2*rounds {
		t.Fatalf("%d trials, want %d", len(f.calls), 2*rounds)
	}
	aFirst := 0
	for r := 0; r < len(f.calls); r += 2 {
		pair := f.calls[r] + " " + f.calls[r+1]
		switch pair {
		case "A:syscall-read B:syscall-read":
			aFirst++
		case "B:syscall-read A:syscall-read":
		default:
			t.Fatalf("round %d ran %s, want A and B once each", r/2+1, pair)
		}
	}
	// The seed fixes the draws; this one has both orders.
	if aFirst == 0 || aFirst == rounds {
		t.Errorf("A ran first in %d of %d rounds: the order is not drawn", aFirst, rounds)
	}
	slots := map[string][]int{}
	for _, name := range []string{"A", "B"} {
		r, err := result.Load(filepath.Join(filepath.Dir(out), "r-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range r.Find("syscall-read").Metrics["syscall.read"].Trials {
			if tr.Round != i+1 {
				t.Fatalf("%s trial %d: round %d, want %d", name, i, tr.Round, i+1)
			}
			slots[name] = append(slots[name], tr.Slot)
		}
	}
	for r := 0; r < rounds; r++ {
		wantA := 1
		if f.calls[2*r] == "A:syscall-read" {
			wantA = 0
		}
		if slots["A"][r] != wantA || slots["B"][r] != 1-wantA {
			t.Errorf("round %d: slots A %d B %d, want A %d", r+1, slots["A"][r], slots["B"][r], wantA)
		}
	}
	if !strings.Contains(stderr, "stopped after 12 rounds") {
		t.Errorf("stderr does not say how many rounds ran and why it stopped:\n%s", stderr)
	}
}

// Identical targets are decided "no change" at the first look (round 12),
// and the gate stops there instead of running to its cap.
func TestGatePairStopsWhenDecided(t *testing.T) {
	f := &fakeExec{}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runGateWith(f.env(fakeSysctls(t)), "syscall-read", "--variant", "A", "--variant", "B", "-o", out)
	if code != exitPass {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	if len(f.calls) != 24 || !strings.Contains(stderr, "stopped after 12 rounds") || !strings.Contains(stderr, "every gated test decided") {
		t.Errorf("%d trials run; want 12 rounds of 2, stopped at the first look:\n%s", len(f.calls), stderr)
	}
	if !strings.Contains(stdout, "run:       12 rounds in") || !strings.Contains(stdout, "every gated test is decided") {
		t.Errorf("the report does not say how the run went:\n%s", stdout)
	}
	for _, name := range []string{"r-A.json", "r-B.json"} {
		r, err := result.Load(filepath.Join(filepath.Dir(out), name))
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Find("syscall-read"); s == nil || s.Trials != 12 {
			t.Errorf("%s: want 12 trials of syscall-read, got %+v", name, s)
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
	if len(f.calls) != 24 {
		t.Errorf("%d trials run, want 24: the regression is confirmed at the first look\n%s", len(f.calls), stderr)
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
		{"syscall-read", "--variant", "A", "--variant", "B", "--slice", "-1s"},
		{"syscall-read", "--variant", "A", "--variant", "B:vm.swappiness=10", "--slice", "0", "--slice-sysctls"},
		{"syscall-read", "--baseline", "/tmp", "--slice-sysctls"},
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
	for _, c := range []struct {
		name   string
		rounds int
		want   []int
	}{
		{"the default budget's rounds", 105, []int{12, 15, 19, 24, 30, 37, 46, 58, 72, 90, 105}},
		{"a look close before the last is dropped", 40, []int{12, 15, 19, 24, 30, 40}},
		{"fewer rounds than the first scheduled look", 5, []int{5}},
		{"the cap", engine.MaxGateRounds, []int{12, 15, 19, 24, 30, 37, 46, 58, 72, 90, 112, 140, 175, 200}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, stats.PlanLooks(c.rounds)); diff != "" {
				t.Errorf("looks (-want +got):\n%s", diff)
			}
		})
	}
}
