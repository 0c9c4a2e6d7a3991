package engine

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

// The same-job gate: base and head run in rounds on this machine, one
// trial each per round in an order drawn at random, and the comparison
// pairs them by round (report/paired.go): the random order makes its
// signed-rank test exact under "nothing changed", whatever the noise.
// After the first rounds the gate knows what a round costs and plans its
// looks within the budget (report.PlanLooks); each look spends an even
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

// PairGate gates a head against a base in one job, in paired rounds.
type PairGate struct {
	// Budget is the most wall time to spend on rounds.
	Budget time.Duration
	// Retries is how many times a broken round runs again.
	Retries int
	// Rounds, when > 0, fixes the rounds (the looks are planned for
	// them); otherwise they are planned within Budget after planAfter.
	Rounds int
	// Slice, when > 0, runs a round's two trials in turns of slices at
	// most this long where the targets can (Plan.Slice).
	Slice time.Duration
	// Jobs, when above 1, runs a round's two trials at once where both
	// targets are Independent (Plan.Jobs).
	Jobs int
	// SliceSysctls lets variants with sysctls take turns in slices,
	// their settings written around their runs of turns
	// (Variant.SliceSysctls).
	SliceSysctls bool
	// Seed, when non-zero, seeds the order within rounds (tests);
	// otherwise the system's random source does.
	Seed uint64
	// Options are the comparison's; the gate sets the look fields.
	Options report.Options
	// Log receives the plan, each look and why the gate stopped.
	Log io.Writer

	plan      *lookPlan
	last      *report.Report
	lastLook  int
	lastRound int
	ran       Ran
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

func (g *PairGate) options(k int) report.Options {
	o := g.Options
	o.Look, o.EvenSpending = k, true
	o.Looks = 1
	if g.plan != nil {
		o.Looks = len(g.plan.rounds)
	}
	return o
}

// Run runs base and head (targets[0], targets[1]) in rounds until the
// looks decide, are spent, or the budget is. It returns each side's
// trials, kept when the rounds were cut short by the error beside them.
func (g *PairGate) Run(ctx context.Context, targets []Target, spec Spec) ([]*result.Result, error) {
	if len(targets) != 2 {
		return nil, Inputf("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", len(targets))
	}
	if g.Budget <= 0 {
		return nil, Inputf("--budget must be positive, got %s", g.Budget)
	}
	if g.Slice < 0 {
		return nil, Inputf("--slice must be 0 (whole trials) or positive, got %s", g.Slice)
	}
	if g.SliceSysctls {
		if g.Slice == 0 {
			return nil, Inputf("--slice-sysctls writes a variant's sysctls around its slices, and --slice 0 runs trials whole: drop one")
		}
		for _, t := range targets {
			if v, ok := t.(*Variant); ok {
				v.SliceSysctls = true
			}
		}
	}
	rounds := MaxGateRounds
	if g.Rounds > 0 {
		rounds = g.Rounds
		g.plan = &lookPlan{rounds: report.PlanLooks(rounds)}
	}
	// The order's seed is logged, not chosen: a reader can see which
	// order ran (each trial's slot is in the Results too).
	seed := g.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := crand.Read(b[:]); err != nil {
			return nil, Infra(fmt.Errorf("random order: %w", err))
		}
		seed = binary.LittleEndian.Uint64(b[:])
	}
	rng := rand.New(rand.NewPCG(seed, 0x7461696c67617465))
	order := func(int) []int {
		if rng.IntN(2) == 0 {
			return []int{0, 1}
		}
		return []int{1, 0}
	}
	var firstDone time.Time
	start := time.Now()
	plannedOut := false
	look := func(r int, res []*result.Result) (bool, error) {
		if r == 1 {
			firstDone = time.Now()
		}
		if g.plan == nil && r >= min(planAfter, rounds) {
			per := time.Duration(0)
			if r > 1 {
				per = time.Since(firstDone) / time.Duration(r-1)
			}
			g.plan = &lookPlan{rounds: report.PlanLooks(min(planRounds(r, time.Since(start), per, g.Budget), rounds))}
			fmt.Fprintf(g.Log, "gate: a round takes %s; looks planned after rounds %s, each at 1/%d of the false-alarm rate\n",
				per.Round(10*time.Millisecond), joinInts(g.plan.rounds), len(g.plan.rounds))
		}
		k := g.plan.lookAt(r)
		if k == 0 || res[0] == nil || res[1] == nil {
			return false, nil
		}
		rep, err := report.Compare(res[0], res[1], g.options(k))
		if err != nil {
			return false, CompareError(err)
		}
		g.last, g.lastLook, g.lastRound = rep, k, r
		st := rep.Stopping(false)
		fmt.Fprintf(g.Log, "look %d/%d after round %d: %s\n", k, len(g.plan.rounds), r, stoppingCounts(st))
		if k == len(g.plan.rounds) && !st.Stop {
			plannedOut = true
			return true, nil
		}
		return st.Stop, nil
	}
	// Both trials of a round start their pinning at the same CPU, drawn
	// per round: a CPU that is slower than the other falls on both.
	cpuOffset := func(int) int { return rng.IntN(1 << 16) }
	plan := Plan{Rounds: rounds, Budget: g.Budget, Retries: g.Retries, Look: look, Order: order, CPUOffset: cpuOffset, Slice: g.Slice, Jobs: g.Jobs}
	fmt.Fprintf(g.Log, "gate: %s (base) vs %s (head), paired rounds in random order (seed %#x), up to %d rounds or %s\n",
		targets[0].Name(), targets[1].Name(), seed, rounds, g.Budget)
	results, ran, err := Rounds(ctx, targets, spec, plan, g.Log)
	if plannedOut {
		ran.Why = StopLooks
	}
	g.ran = ran
	return results, err
}

// Report is the gate's verdict on the trials Run returned: the last look's
// comparison, or, when the budget ended the rounds between looks, the next
// planned look's on every round (its place depends on time, not on any
// round's outcome); it says on Log why the gate stopped.
func (g *PairGate) Report(results []*result.Result) (*report.Report, error) {
	if results[0] == nil || results[1] == nil {
		return nil, Infra(fmt.Errorf("no round finished on both targets"))
	}
	if g.last == nil || g.lastRound != g.ran.Rounds {
		k := g.lastLook + 1
		if g.plan != nil && k > len(g.plan.rounds) {
			k = len(g.plan.rounds)
		}
		var err error
		if g.last, err = report.Compare(results[0], results[1], g.options(k)); err != nil {
			return nil, CompareError(err)
		}
	}
	g.last.Run = &report.RunInfo{Rounds: g.ran.Rounds, Seconds: g.ran.Elapsed.Seconds(), Stop: g.last.Stopping(g.ran.Why != StopDecided)}
	if g.Slice > 0 && g.ran.Whole == "" {
		g.last.Run.Slice = g.Slice
	}
	fmt.Fprintf(g.Log, "gate: %s\n", stopReason(g.ran, g.last.Run.Stop, g.Budget))
	return g.last, nil
}

// Gate runs base and head in rounds (Run), writes each side's Result
// where output says (WriteTargetResults: what was measured is kept even
// when the rounds were cut short) and returns the verdict (Report) as a
// Matrix of two, the same renderers' model as a matrix's.
func (g *PairGate) Gate(ctx context.Context, targets []Target, spec Spec, output string) (*report.Matrix, error) {
	results, runErr := g.Run(ctx, targets, spec)
	if results == nil {
		return nil, runErr
	}
	if err := WriteTargetResults(output, targets, results, runErr, g.Log); err != nil {
		return nil, err
	}
	rep, err := g.Report(results)
	if err != nil {
		return nil, err
	}
	return rep.Matrix(), nil
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
