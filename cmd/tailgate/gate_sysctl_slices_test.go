package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// reader is a host target that reads a sysctl as each of its runs in a
// sliced pair starts: what its workload ran under.
type reader struct {
	engine.Target
	key  string
	seen *[]string
}

func (r reader) Interleave(req runner.Request) (runner.Request, func(*result.Result), string) {
	run, stamp, why := r.Target.(engine.Interleaver).Interleave(req)
	run.SliceHook = func(on bool) error {
		if on {
			v, err := sysctl.Read(sysctl.Root, r.key)
			if err != nil {
				return err
			}
			*r.seen = append(*r.seen, v)
		}
		return nil
	}
	return run, stamp, why
}

// flipKey is the sysctl the tests flip: harmless, 0 or 1 on every kernel.
const flipKey = "kernel.timer_migration"

// flippedSysctl needs root, and returns flipKey's value, the other one, and
// the scenario the tests run.
func flippedSysctl(t *testing.T) (orig, flip string, sc *scenarios.Scenario) {
	t.Helper()
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF and sysctls: %v", err)
	}
	orig, err := sysctl.Read(sysctl.Root, flipKey)
	if err != nil {
		t.Fatal(err)
	}
	flip = map[string]string{"0": "1", "1": "0"}[orig]
	if flip == "" {
		t.Fatalf("%s reads %q, want 0 or 1", flipKey, orig)
	}
	if sc, err = scenarios.Lookup("syscall-read"); err != nil {
		t.Fatal(err)
	}
	return orig, flip, sc
}

// noJournalLeft fails t if a sysctl journal is still on disk.
func noJournalLeft(t *testing.T) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(sysctl.JournalDir(sysctl.Root), "*.json")); len(left) > 0 {
		t.Errorf("sysctl journals left: %v", left)
	}
}

// With --slice-sysctls a variant's sysctl is in force during its own
// turns only: read as every run of its turns starts, the head's warmup
// and slices see its value and the base's see the machine's. After the rounds the value
// is the machine's again, no journal is left, and the head's Result
// records the setting as read back.
func TestSlicedSysctlsHoldDuringTheirTurnsOnly(t *testing.T) {
	orig, flip, sc := flippedSysctl(t)
	var seen [2][]string
	base := reader{Target: &engine.Host{TargetName: "base"}, key: flipKey, seen: &seen[0]}
	head := &engine.Variant{
		Target:      reader{Target: &engine.Host{}, key: flipKey, seen: &seen[1]},
		VariantName: "head", Sysctls: []sysctl.Setting{{Key: flipKey, Value: flip}},
		SliceSysctls: true, Root: sysctl.Root,
	}
	spec := engine.Spec{Scenarios: []*scenarios.Scenario{sc}, Trials: 2, Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond, WarmupSet: true}
	res, ran, err := engine.Rounds(context.Background(), []engine.Target{base, head}, spec,
		engine.Plan{Rounds: 2, Slice: 20 * time.Millisecond, Order: func(r int) []int { return [][]int{{0, 1}, {1, 0}}[r%2] }}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Whole != "" {
		t.Fatalf("the rounds ran whole: %s", ran.Whole)
	}
	// Two rounds of a warmup and 5 slices a side, in three runs a side
	// (A, B B, A A, B B, A A, B: a run's slices are back to back).
	for side, want := range []string{orig, flip} {
		if len(seen[side]) != 8 {
			t.Errorf("side %d: %d runs, want 8", side, len(seen[side]))
		}
		for i, v := range seen[side] {
			if v != want {
				t.Errorf("side %d turn %d ran with %s=%s, want %s", side, i, flipKey, v, want)
			}
		}
	}
	if v, _ := sysctl.Read(sysctl.Root, flipKey); v != orig {
		t.Errorf("after the rounds %s=%s, want %s back", flipKey, v, orig)
	}
	noJournalLeft(t)
	got := res[1].Target.Sysctls
	if len(got) != 1 || got[0] != (result.Sysctl{Key: flipKey, Set: flip, Read: flip}) {
		t.Errorf("head's Result records sysctls %+v, want %s set and read %s", got, flipKey, flip)
	}
	if len(res[0].Target.Sysctls) != 0 {
		t.Errorf("base's Result records sysctls %+v, want none", res[0].Target.Sysctls)
	}
}

// Rounds cut in the middle of a head's slice put its sysctl back and
// leave no journal.
func TestInterruptedSlicedSysctlsAreRestored(t *testing.T) {
	orig, flip, sc := flippedSysctl(t)
	head := &engine.Variant{Target: &engine.Host{}, VariantName: "head", Sysctls: []sysctl.Setting{{Key: flipKey, Value: flip}}, SliceSysctls: true, Root: sysctl.Root}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(700*time.Millisecond, cancel)
	spec := engine.Spec{Scenarios: []*scenarios.Scenario{sc}, Trials: 1, Duration: 10 * time.Second, Warmup: 20 * time.Millisecond, WarmupSet: true}
	_, _, err := engine.Rounds(ctx, []engine.Target{&engine.Host{TargetName: "base"}, head}, spec,
		engine.Plan{Rounds: 1, Slice: 20 * time.Millisecond, Order: func(int) []int { return []int{1, 0} }}, io.Discard)
	if err == nil {
		t.Fatal("the cut rounds returned no error")
	}
	if v, _ := sysctl.Read(sysctl.Root, flipKey); v != orig {
		t.Errorf("after the cut rounds %s=%s, want %s back", flipKey, v, orig)
	}
	noJournalLeft(t)
}
