package engine

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// The same-job gate: base and head run in rounds on this machine, one
// trial each per round in an order drawn at random, and the comparison
// pairs them by round (report/stats/paired.go): the random order makes its
// signed-rank test exact under "nothing changed", whatever the noise.
// After the first rounds the gate knows what a round costs and plans its
// looks within the budget (stats.PlanLooks); each look spends an even
// share of the false-alarm rate. It stops as soon as every gated test is
// decided (a regression, or no change: the interval inside ±threshold),
// or a regression is confirmed, or the planned looks or the budget are
// spent; what is still open is inconclusive.

// Gate defaults, chosen by measurement (BENCHMARKS.md, "Gate runs").
const (
	// DefaultBudget is the wall time a same-job gate may spend on rounds.
	DefaultBudget = 3 * time.Minute
	// MaxGateRounds caps the rounds of a same-job gate.
	MaxGateRounds = 200
	// DefaultSlice is the longest slice of a trial in a round whose two
	// trials take turns (Plan.Slice): shorter than most bursts of other
	// work measured beside the gate (50-1500 ms), long enough that a
	// slice's start and end are a small part of it.
	DefaultSlice = 25 * time.Millisecond
	// planAfter is the round after which the looks are planned from the
	// time the rounds since the first took.
	planAfter = 3
)

// CompareError classifies an error of report.Compare: a candidate that
// lacks what the gate policy gates is a broken run (InfraError), anything
// else bad input.
func CompareError(err error) error {
	if errors.Is(err, report.ErrCandidateIncomplete) {
		return Infra(err)
	}
	return &InputError{err}
}

// PairGate is how a head is gated against a base in one job, in paired
// rounds: its options. Each Gate is a run of its own (pairRun).
type PairGate struct {
	RoundsOptions
	// Budget is the most wall time to spend on rounds.
	Budget time.Duration
	// Rounds, when > 0, fixes the rounds (the looks are planned for
	// them); otherwise they are planned within Budget after planAfter.
	Rounds int
	// Slice, when > 0, runs a round's two trials in turns of slices at
	// most this long where the targets can (Plan.Slice).
	Slice time.Duration
	// SliceSysctls lets variants with sysctls take turns in slices,
	// their settings written around their runs of turns
	// (Variant.SliceSysctls).
	SliceSysctls bool
	// Seed, when non-zero, seeds the order within rounds (tests);
	// otherwise the system's random source does.
	Seed uint64
}

// CheckPair refuses a same-job gate of n targets: it takes two, base then
// head.
func CheckPair(n int) error {
	switch {
	case n == 1:
		return Inputf("one target given: a gate in one job needs two, base then head (e.g. --variant base --variant tuned:KEY=VALUE), or --baseline DIR")
	case n != 2:
		return Inputf("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", n)
	}
	return nil
}

// PlannedTime is the least wall time the gate's rounds of spec take on n
// targets, and what of (for CheckTime): the rounds Rounds fixes, when
// they take less than the budget, else the budget.
func (g PairGate) PlannedTime(spec Spec, n int) (time.Duration, string) {
	if t, what := spec.RoundsTime(n); g.Rounds > 0 && t < g.Budget {
		return t, what
	}
	return g.Budget, "the rounds' --budget"
}

// Gate runs base and head (targets[0], targets[1]) in rounds until the
// looks decide, are spent, or the budget is; writes each side's Result
// where Output says (WriteTargetResults: what was measured is kept even
// when the rounds were cut short); and returns the verdict as a Matrix
// of two, the same renderers' model as a matrix's.
func (g PairGate) Gate(ctx context.Context, targets []Target, spec Spec) (*report.Matrix, error) {
	run, runErr := g.run(ctx, targets, spec)
	if run == nil {
		return nil, runErr
	}
	defer run.p.End()
	if err := WriteTargetResults(g.Output, targets, run.results, runErr, g.Log); err != nil {
		return nil, err
	}
	rep, err := run.report()
	if err != nil {
		return nil, err
	}
	return rep.Matrix(), nil
}

// check refuses options no gate of targets could run with.
func (g PairGate) check(targets []Target) error {
	if err := CheckPair(len(targets)); err != nil {
		return err
	}
	if g.Budget <= 0 {
		return Inputf("--budget must be positive, got %s", g.Budget)
	}
	if g.Slice < 0 {
		return Inputf("--slice must be 0 (whole trials) or positive, got %s", g.Slice)
	}
	if g.SliceSysctls && g.Slice == 0 {
		return Inputf("--slice-sysctls writes a variant's sysctls around its slices, and --slice 0 runs trials whole: drop one")
	}
	return nil
}

// seed is Seed, else one drawn from the system's random source.
func (g PairGate) seed() (uint64, error) {
	if g.Seed != 0 {
		return g.Seed, nil
	}
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		return 0, Infra(fmt.Errorf("random order: %w", err))
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// pairRun is one run of a PairGate: its looks (planned after the first
// rounds unless Rounds fixes them), the last look's comparison, and each
// side's trials and how the rounds went.
type pairRun struct {
	g         PairGate
	rounds    int // the most rounds
	plan      *lookPlan
	start     time.Time
	firstDone time.Time // when round 1 ended
	last      *report.Report
	lastLook  int
	lastRound int
	// plannedOut says the last planned look left tests open.
	plannedOut bool
	// unreachable are the tests told to lie inside their nuisance band
	// ("scenario metric percentile"), each told once.
	unreachable map[string]bool
	results     []*result.Result
	ran         Ran
	p           *progress.Reporter
}

// run runs the rounds. It returns nil before any round (bad options, no
// random source); else the run, with each side's trials kept when the
// rounds were cut short by the error beside it.
func (g PairGate) run(ctx context.Context, targets []Target, spec Spec) (*pairRun, error) {
	if err := g.check(targets); err != nil {
		return nil, err
	}
	if g.SliceSysctls {
		for _, t := range targets {
			if v, ok := t.(*Variant); ok {
				v.SliceSysctls = true
			}
		}
	}
	pr := &pairRun{g: g, rounds: MaxGateRounds, p: progress.New(g.Log, progress.Options{Mode: g.Progress})}
	if g.Rounds > 0 {
		pr.rounds = g.Rounds
		pr.plan = &lookPlan{rounds: stats.PlanLooks(pr.rounds)}
	}
	// The order's seed is logged, not chosen: a reader can see which
	// order ran (each trial's slot is in the Results too).
	seed, err := g.seed()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x7461696c67617465))
	order := func(int) []int {
		if rng.IntN(2) == 0 {
			return []int{0, 1}
		}
		return []int{1, 0}
	}
	// Both trials of a round start their pinning at the same CPU, drawn
	// per round: a CPU that is slower than the other falls on both.
	cpuOffset := func(int) int { return rng.IntN(1 << 16) }
	plan := Plan{Rounds: pr.rounds, Budget: g.Budget, Retries: g.Retries, Look: pr.look, Order: order, CPUOffset: cpuOffset, Slice: g.Slice, Jobs: g.Jobs, Progress: pr.p}
	pr.start = time.Now()
	pr.p.Line(fmt.Sprintf("gate: %s (base) vs %s (head), paired rounds in random order (seed %#x), up to %d rounds or %s",
		targets[0].Name(), targets[1].Name(), seed, pr.rounds, g.Budget))
	results, ran, err := Rounds(ctx, targets, spec, plan, g.Log)
	if pr.plannedOut {
		ran.Why = StopLooks
	}
	pr.results, pr.ran = results, ran
	return pr, err
}

// look is the rounds' Plan.Look: after round r it plans the looks once
// (planAfter), and at a planned look compares what each side has (res),
// saying whether to stop.
func (pr *pairRun) look(r int, res []*result.Result) (bool, error) {
	if r == 1 {
		pr.firstDone = time.Now()
	}
	pr.planLooks(r, res)
	k := pr.plan.lookAt(r)
	if k == 0 || res[0] == nil || res[1] == nil {
		return false, nil
	}
	rep, err := report.Compare(res[0], res[1], pr.options(k))
	if err != nil {
		return false, CompareError(err)
	}
	pr.last, pr.lastLook, pr.lastRound = rep, k, r
	pr.tellUnreachable(rep)
	st := rep.Stopping(false)
	pr.p.Look(lookLine(k, len(pr.plan.rounds), r, rep))
	if k == len(pr.plan.rounds) && !st.Stop {
		pr.plannedOut = true
		return true, nil
	}
	return st.Stop, nil
}

// tellUnreachable says, in one line each, as soon as a look finds it, every
// gated test of rep whose threshold lies inside its nuisance band: no
// number of rounds decides it.
func (pr *pairRun) tellUnreachable(rep *report.Report) {
	for _, s := range rep.Scenarios {
		for _, v := range s.Verdicts {
			key := s.Name + " " + v.Metric + " " + v.Quantile
			if !v.InsideBand() || pr.unreachable[key] {
				continue
			}
			if pr.unreachable == nil {
				pr.unreachable = map[string]bool{}
			}
			pr.unreachable[key] = true
			for _, w := range v.Warnings {
				if w.Kind == stats.WarnInsideBand {
					pr.p.Line(fmt.Sprintf("gate: %s %s %s", s.Name, v.Metric, render.WarningText(w)))
				}
			}
		}
	}
}

// planLooks plans the looks after round r once planAfter rounds ran,
// within the budget at the pace of the rounds since the first (the first
// loads what later ones reuse); until then the rounds planned for
// progress are what the budget allows at the pace so far.
func (pr *pairRun) planLooks(r int, res []*result.Result) {
	if pr.plan != nil {
		pr.p.Plan(pr.plan.rounds[len(pr.plan.rounds)-1], "rounds")
		return
	}
	elapsed := time.Since(pr.start)
	virtual := res[0] != nil && res[0].Target.Virtual()
	plan := stats.PlanLooks
	if virtual {
		plan = stats.PlanBootLooks
	}
	// The pace as the rounds' budget rule (fits) reckons it: the rounds
	// after the first, or the first alone.
	per := elapsed / time.Duration(r)
	if r > 1 {
		per = time.Since(pr.firstDone) / time.Duration(r-1)
	}
	if r < min(planAfter, pr.rounds) {
		// Until the looks are planned, the rounds planned are those the
		// plan would end at now: within the budget at this pace, and in
		// virtual time within the boots' looks.
		looks := plan(min(planRounds(r, elapsed, per, pr.g.Budget), pr.rounds))
		pr.p.Plan(looks[len(looks)-1], "rounds")
		return
	}
	if virtual {
		how := "as two samples, since their guests differ and so does each seed's draw"
		if res[1] != nil && report.CommonDraws(res[0], res[1]) {
			how = "pair by pair, since their guests are given the same bytes and each seed is the same draw on both"
		}
		pr.p.Line("gate: boots in virtual time repeat whatever the host does; each draws its layout and start phase from its seed, and round i's boots of both sides share seed i: they are compared " + how + ", each test held undecided where its threshold lies inside its nuisance band (docs/vms.md)")
	}
	pr.plan = &lookPlan{rounds: plan(min(planRounds(r, elapsed, per, pr.g.Budget), pr.rounds))}
	pr.p.Line(fmt.Sprintf("gate: a round takes %s; looks planned after rounds %s, each at 1/%d of the false-alarm rate",
		per.Round(10*time.Millisecond), joinInts(pr.plan.rounds), len(pr.plan.rounds)))
	pr.p.Plan(pr.plan.rounds[len(pr.plan.rounds)-1], "rounds")
}

// options are the comparison's at look k.
func (pr *pairRun) options(k int) report.Options {
	o := pr.g.Compare
	o.Look, o.EvenSpending = k, true
	o.Looks = 1
	if pr.plan != nil {
		o.Looks = len(pr.plan.rounds)
	}
	return o
}

// report is the gate's verdict on the trials the run kept: the last
// look's comparison, or, when the budget ended the rounds between looks,
// the next planned look's on every round (its place depends on time, not
// on any round's outcome); it says on Log why the gate stopped.
func (pr *pairRun) report() (*report.Report, error) {
	res, ran := pr.results, pr.ran
	if res[0] == nil || res[1] == nil {
		return nil, Infra(fmt.Errorf("no round finished on both targets"))
	}
	if pr.last == nil || pr.lastRound != ran.Rounds {
		k := pr.lastLook + 1
		if pr.plan != nil && k > len(pr.plan.rounds) {
			k = len(pr.plan.rounds)
		}
		var err error
		if pr.last, err = report.Compare(res[0], res[1], pr.options(k)); err != nil {
			return nil, CompareError(err)
		}
	}
	pr.last.Run = &report.RunInfo{Rounds: ran.Rounds, Seconds: ran.Elapsed.Seconds(), Stop: pr.last.Stopping(ran.Why != StopDecided)}
	if pr.g.Slice > 0 && ran.Whole == "" {
		pr.last.Run.Slice = pr.g.Slice
	}
	pr.p.Line("gate: " + stopReason(ran, pr.last.Run.Stop, pr.g.Budget))
	return pr.last, nil
}

// lookPlan is a paired gate's looks: the rounds after which it compares
// what it has, fixed before the first.
type lookPlan struct {
	rounds []int // look k after rounds[k-1]
}

// lookAt returns the look due after round r (1-based), or 0.
func (p *lookPlan) lookAt(r int) int {
	if p == nil {
		return 0
	}
	for k, at := range p.rounds {
		if at == r {
			return k + 1
		}
	}
	return 0
}

// planRounds is the most rounds that fit the budget when the rounds after
// the first took per each (the first one loads what later ones reuse).
func planRounds(done int, elapsed, per, budget time.Duration) int {
	if per <= 0 {
		return MaxGateRounds
	}
	left := budget - elapsed
	n := done + int(left/per)
	return min(max(n, done), MaxGateRounds)
}

// stoppingCounts words a look's tally: "1 gated, 1 undecided, 0 regressions".
func stoppingCounts(st report.Stopping) string {
	return fmt.Sprintf("%d gated, %d undecided, %s", st.Gated, st.Undecided, english.Count(st.Regressions, "regression"))
}

// stopReason says how many rounds ran and why the gate stopped.
func stopReason(ran Ran, st report.Stopping, budget time.Duration) string {
	trials := english.Plural(ran.Rounds, "trial", "trials")
	switch ran.Why {
	case StopDecided:
		return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): every gated test decided", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second))
	case StopLooks:
		return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): the looks planned for the %s budget are spent; %s", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second), budget, stoppingCounts(st))
	case StopBudget:
		return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): the %s budget is spent; %s", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second), budget, stoppingCounts(st))
	}
	return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): the round cap; %s", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second), stoppingCounts(st))
}

func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}
