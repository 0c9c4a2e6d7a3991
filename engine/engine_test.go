package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// fakeTarget is a target with no BPF and no QEMU: each run returns one
// synthetic trial per scenario at once, and records what it was asked.
type fakeTarget struct {
	name    string
	log     *[]string // "NAME:scenario,scenario", shared across targets
	fail    []error   // the errors of the first runs, in order
	prepare error
	sleep   time.Duration
	runs    int
}

func (f *fakeTarget) Name() string { return f.name }

func (f *fakeTarget) Prepare(req runner.Request) (runner.Request, error) { return req, f.prepare }

func (f *fakeTarget) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	f.runs++
	var names []string
	for _, s := range req.Scenarios {
		names = append(names, s.Name)
	}
	*f.log = append(*f.log, f.name+":"+strings.Join(names, ","))
	time.Sleep(f.sleep)
	if len(f.fail) > 0 {
		err := f.fail[0]
		f.fail = f.fail[1:]
		return nil, err
	}
	res := &result.Result{Schema: result.SchemaVersion, Target: req.Target, Scenarios: []result.Scenario{}}
	for _, s := range req.Scenarios {
		r := req.Resolve(s)
		if r.Trials != 1 {
			return nil, errors.New("a round asks for one trial")
		}
		h := hist.New()
		h.Record(1000)
		def, _ := json.Marshal(r)
		res.Scenarios = append(res.Scenarios, result.Scenario{
			Name: s.Name, Trials: 1, Definition: def, Params: scenarios.Params(r),
			// The seed as a VM in virtual time records it.
			Metrics: map[string]*result.Metric{"m": {Unit: "ns", Trials: []result.Trial{{Histogram: h, Summary: result.Summarize(h), PID: f.runs, Ops: 1, Seed: req.Seed}}}},
		})
	}
	return res, nil
}

func fakes(names ...string) ([]Target, *[]string) {
	log := &[]string{}
	var ts []Target
	for _, n := range names {
		ts = append(ts, &fakeTarget{name: n, log: log})
	}
	return ts, log
}

func spec(trials ...int) Spec {
	var s Spec
	for i, n := range trials {
		s.Scenarios = append(s.Scenarios, &scenarios.Scenario{Name: string(rune('a' + i)), Trials: n, Duration: time.Second})
	}
	return s
}

// Rounds alternate the targets' order (A B C, C B A, ...); a scenario
// drops out after its own trials; each target's trials are appended, and
// the definition says how many it holds.
func TestRoundsOrderAndAppendedTrials(t *testing.T) {
	ts, log := fakes("A", "B", "C")
	sp := spec(3, 2)
	res, ran, err := Rounds(context.Background(), ts, sp, Plan{Rounds: PlannedRounds(sp)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A:a,b", "B:a,b", "C:a,b", "C:a,b", "B:a,b", "A:a,b", "A:a", "B:a", "C:a"}
	if diff := cmp.Diff(want, *log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if ran.Rounds != 3 || ran.Why != StopRounds {
		t.Errorf("ran %+v, want 3 rounds, stopped by the rounds", ran)
	}
	for i, r := range res {
		for _, s := range r.Scenarios {
			var def scenarios.Scenario
			if err := json.Unmarshal(s.Definition, &def); err != nil {
				t.Fatal(err)
			}
			if def.Trials != s.Trials || len(s.Metrics["m"].Trials) != s.Trials {
				t.Errorf("%s %s: %d trials, %d in the definition, %d in the metric", ts[i].Name(), s.Name, s.Trials, def.Trials, len(s.Metrics["m"].Trials))
			}
		}
		if got := r.Find("a").Trials; got != 3 {
			t.Errorf("%s: a has %d trials, want 3", ts[i].Name(), got)
		}
	}
}

// A given order is followed and stamps each trial with its round and slot.
func TestRoundsOrderStampsPairs(t *testing.T) {
	ts, log := fakes("A", "B")
	res, _, err := Rounds(context.Background(), ts, Spec{Scenarios: spec(1).Scenarios, Trials: 2}, Plan{Rounds: 2, Order: func(int) []int { return []int{1, 0} }}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"B:a", "A:a", "B:a", "A:a"}, *log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	for _, tr := range res[0].Find("a").Metrics["m"].Trials {
		if tr.Slot != 1 || tr.Round == 0 {
			t.Errorf("A's trial: round %d slot %d, want slot 1", tr.Round, tr.Slot)
		}
	}
}

// Common random numbers: round i's trials of every target draw seed i, so
// that trial i of both sides of a gate shares seed i, in whatever order
// the round ran them.
func TestRoundsShareSeeds(t *testing.T) {
	ts, _ := fakes("base", "head")
	order := func(r int) []int { return [][]int{{0, 1}, {1, 0}}[r%2] }
	res, _, err := Rounds(context.Background(), ts, Spec{Scenarios: spec(1).Scenarios, Trials: 5}, Plan{Rounds: 5, Order: order}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	base, head := res[0].Find("a").Metrics["m"].Trials, res[1].Find("a").Metrics["m"].Trials
	if len(base) != 5 || len(head) != 5 {
		t.Fatalf("%d and %d trials, want 5 a side", len(base), len(head))
	}
	for i := range base {
		if base[i].Seed != uint64(i+1) || head[i].Seed != base[i].Seed || base[i].Round != i+1 {
			t.Errorf("trial %d: base round %d seed %d, head seed %d; want both seed %d", i+1, base[i].Round, base[i].Seed, head[i].Seed, i+1)
		}
	}
}

// A broken run is run again up to Retries times; bad input never is.
func TestRoundsRetries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    []error
		retries int
		runs    int
		wantErr bool
	}{
		{"retried", []error{errors.New("guest oops")}, 1, 3, false},
		{"retries spent", []error{errors.New("oops"), errors.New("oops")}, 1, 2, true},
		{"bad input not retried", []error{Inputf("bad")}, 3, 1, true},
		{"restore failure not retried", []error{&RestoreError{errors.New("x")}}, 3, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := fakes("A")
			ts[0].(*fakeTarget).fail = tc.fail
			_, _, err := Rounds(context.Background(), ts, spec(2), Plan{Rounds: 2, Retries: tc.retries}, io.Discard)
			if got := ts[0].(*fakeTarget).runs; got != tc.runs {
				t.Errorf("%d runs, want %d", got, tc.runs)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// No round starts once the budget is spent; the first always runs.
func TestRoundsBudget(t *testing.T) {
	ts, _ := fakes("A", "B")
	ts[0].(*fakeTarget).sleep = 5 * time.Millisecond
	res, ran, err := Rounds(context.Background(), ts, Spec{Scenarios: spec(1).Scenarios, Trials: 50}, Plan{Rounds: 50, Budget: 12 * time.Millisecond}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Why != StopBudget || ran.Rounds < 1 || ran.Rounds >= 50 {
		t.Errorf("ran %+v, want stopped by the budget after a few rounds", ran)
	}
	if got := res[1].Find("a").Trials; got != ran.Rounds {
		t.Errorf("B has %d trials after %d rounds", got, ran.Rounds)
	}
}

// No round starts that the budget cannot hold at the pace so far (the
// first always runs): rounds of at least 40 ms in a 100 ms budget stop
// after at most two, where a round started while time was left would
// start a third at 80 ms and end past the budget, however slow the
// machine makes each round.
func TestRoundsBudgetHoldsRound(t *testing.T) {
	ts, _ := fakes("A", "B")
	ts[0].(*fakeTarget).sleep = 40 * time.Millisecond
	const budget = 100 * time.Millisecond
	_, ran, err := Rounds(context.Background(), ts, Spec{Scenarios: spec(1).Scenarios, Trials: 50}, Plan{Rounds: 50, Budget: budget}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Why != StopBudget || ran.Rounds < 1 || ran.Rounds > 2 {
		t.Errorf("ran %+v, want stopped by a %v budget after one or two rounds", ran, budget)
	}
}

// The look sees every target's trials so far after each round, and stops
// the rounds when it says so.
func TestRoundsLook(t *testing.T) {
	ts, _ := fakes("A", "B")
	var seen []int
	look := func(r int, res []*result.Result) (bool, error) {
		seen = append(seen, res[0].Find("a").Trials+res[1].Find("a").Trials)
		return r == 3, nil
	}
	_, ran, err := Rounds(context.Background(), ts, spec(1), Plan{Rounds: 10, Look: look}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2, 4, 6}, seen); diff != "" {
		t.Errorf("trials seen at each look (-want +got):\n%s", diff)
	}
	if ran.Rounds != 3 || ran.Why != StopDecided {
		t.Errorf("ran %+v, want 3 rounds, decided", ran)
	}
}

// Errors come back typed: bad input from Prepare before any trial, a
// failed trial as an InfraError naming the round, an interrupt as one,
// and what finished before is kept.
func TestRoundsTypedErrors(t *testing.T) {
	t.Run("prepare", func(t *testing.T) {
		ts, log := fakes("A", "B")
		ts[1].(*fakeTarget).prepare = Inputf("scenario a cannot run in a VM")
		_, _, err := Rounds(context.Background(), ts, spec(2), Plan{Rounds: 2}, io.Discard)
		var ie *InputError
		if !errors.As(err, &ie) || len(*log) != 0 {
			t.Errorf("err %v after %v, want an InputError before any trial", err, *log)
		}
	})
	t.Run("broken", func(t *testing.T) {
		ts, _ := fakes("A", "B")
		ts[1].(*fakeTarget).fail = []error{errors.New("boom")}
		res, ran, err := Rounds(context.Background(), ts, spec(2), Plan{Rounds: 2}, io.Discard)
		var ie *InfraError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "round 1/2 on B: boom") {
			t.Errorf("err %v, want an InfraError naming round 1 on B", err)
		}
		if ran.Rounds != 0 || res[0] == nil || res[1] != nil {
			t.Errorf("ran %d rounds, results %v; want A's trial kept", ran.Rounds, res)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ts, _ := fakes("A", "B")
		cancel()
		_, _, err := Rounds(ctx, ts, spec(2), Plan{Rounds: 2}, io.Discard)
		var ie *InfraError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "interrupted in round 1/2 on A") {
			t.Errorf("err %v, want an interrupt named as an InfraError", err)
		}
	})
}

// A Variant sets its sysctls for exactly its runs.
func TestVariantSysctls(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "vm", "swappiness"), []byte("60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := ParseVariant("low:vm.swappiness=10")
	name, settings, descr := vs.Name, vs.Sysctls, vs.Description
	if err != nil || name != "low" || descr != "host, vm.swappiness=10" {
		t.Fatalf("ParseVariant = %q, %v, %q, %v", name, settings, descr, err)
	}
	inner := &fakeTarget{name: "host", log: &[]string{}}
	var during string
	v := &Variant{Target: &sysctlPeek{inner, root, &during}, VariantName: name, Sysctls: settings, Root: root}
	if err := CheckVariants([]Target{v}, root, io.Discard); err != nil {
		t.Fatal(err)
	}
	res, _, err := Rounds(context.Background(), []Target{v}, spec(1), Plan{Rounds: 1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res[0].Target.Sysctls, []result.Sysctl{{Key: "vm.swappiness", Set: "10", Read: "10"}}; !slices.Equal(got, want) {
		t.Errorf("the Result records sysctls %v, want %v", got, want)
	}
	after, _ := sysctl.Read(root, "vm.swappiness")
	if during != "10" || after != "60" {
		t.Errorf("vm.swappiness %s during the trial, %s after; want 10 then 60", during, after)
	}
	if _, err := ParseVariant("bad name"); !errors.As(err, new(*InputError)) {
		t.Errorf("ParseVariant(bad name) = %v, want an InputError", err)
	}
}

// sysctlPeek reads vm.swappiness during each run.
type sysctlPeek struct {
	*fakeTarget
	root string
	got  *string
}

func (s *sysctlPeek) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	*s.got, _ = sysctl.Read(s.root, "vm.swappiness")
	return s.fakeTarget.Run(ctx, req, p)
}

// A variant with sysctls takes turns in slices only when asked
// (SliceSysctls), and then through a hook that writes them; asked or not,
// deciding so writes nothing.
func TestVariantSysctlsTakeTurnsOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "kernel", "timer_migration")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := &Variant{Target: &Host{}, VariantName: "tm", Sysctls: []sysctl.Setting{{Key: "kernel.timer_migration", Value: "0"}}, Root: root}
	if _, _, why := v.Interleave(runner.Request{}); !strings.Contains(why, "--slice-sysctls") {
		t.Errorf("without SliceSysctls: why = %q, want whole trials and the flag that slices them", why)
	}
	v.SliceSysctls = true
	run, _, why := v.Interleave(runner.Request{})
	if why != "" || run.SliceHook == nil {
		t.Fatalf("with SliceSysctls: why = %q, hook set %v; want slices through a hook", why, run.SliceHook != nil)
	}
	if b, _ := os.ReadFile(p); string(b) != "1\n" {
		t.Errorf("deciding wrote the sysctl: %q", b)
	}
	if err := run.SliceHook(true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("in its turn the sysctl reads %q, want 0", b)
	}
	if err := run.SliceHook(false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != "1" {
		t.Errorf("between its turns the sysctl reads %q, want 1", b)
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(sysctl.JournalDir(root), "*.json")); len(left) > 0 {
		t.Errorf("journal left after Release: %v", left)
	}
}
