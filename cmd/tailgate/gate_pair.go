package main

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
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
	// maxGateRounds caps the rounds of a same-job gate.
	maxGateRounds = 200
	// planAfter is the round after which the looks are planned from the
	// time the rounds since the first took.
	planAfter = 3
)

// pairEnv is what a same-job gate touches outside itself; tests replace it.
type pairEnv = matrixEnv

// gateOptions is what a same-job gate needs besides its flags.
type gateOptions struct {
	budget  time.Duration
	retries int
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
		return maxGateRounds
	}
	left := budget - elapsed
	n := done + int(left/per)
	return min(max(n, done), maxGateRounds)
}

// gatePair runs base and head in rounds and gates head against base.
func gatePair(ctx context.Context, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, opt gateOptions, env pairEnv, stdout, stderr io.Writer) error {
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if err := checkThresholdMetrics(f.thresholds, scenarioMetrics(ss)); err != nil {
		return err
	}
	outs, err := f.resolveOutputs()
	if err != nil {
		return err
	}
	targets, err := matrixTargets(tf)
	if err != nil {
		return err
	}
	if len(targets) != 2 {
		return usagef("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", len(targets))
	}
	if err := checkVariantKeys(targets, env.sysctlRoot); err != nil {
		return err
	}
	if _, err := rf.request(ss, nil); err != nil {
		return err
	}
	if err := checkTargetOutputs(rf.output, targets); err != nil {
		return err
	}
	if opt.budget <= 0 {
		return usagef("--budget must be positive, got %s", opt.budget)
	}
	rounds := maxGateRounds
	var plan *lookPlan
	if rf.trials > 0 {
		rounds = rf.trials
		plan = &lookPlan{rounds: report.PlanLooks(rounds)}
	}
	// The order's seed is logged, not chosen: a reader can see which
	// order ran (each trial's slot is in the Results too).
	seed := env.orderSeed
	if seed == 0 {
		var b [8]byte
		if _, err := crand.Read(b[:]); err != nil {
			return infra(fmt.Errorf("random order: %w", err))
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
	options := func(k int) report.Options {
		o := f.options()
		o.Look, o.EvenSpending = k, true
		o.Looks = 1
		if plan != nil {
			o.Looks = len(plan.rounds)
		}
		return o
	}
	var last *report.Report
	var lastLook, lastRound int
	var firstDone time.Time
	start := time.Now()
	plannedOut := false
	look := func(r int, res []*result.Result) (bool, error) {
		if r == 1 {
			firstDone = time.Now()
		}
		if plan == nil && r >= min(planAfter, rounds) {
			per := time.Duration(0)
			if r > 1 {
				per = time.Since(firstDone) / time.Duration(r-1)
			}
			plan = &lookPlan{rounds: report.PlanLooks(min(planRounds(r, time.Since(start), per, opt.budget), rounds))}
			fmt.Fprintf(stderr, "gate: a round takes %s; looks planned after rounds %s, each at 1/%d of the false-alarm rate\n",
				per.Round(10*time.Millisecond), joinInts(plan.rounds), len(plan.rounds))
		}
		k := plan.lookAt(r)
		if k == 0 || res[0] == nil || res[1] == nil {
			return false, nil
		}
		rep, err := report.Compare(res[0], res[1], options(k))
		if err != nil {
			return false, compareError(err)
		}
		last, lastLook, lastRound = rep, k, r
		st := rep.Stopping(false)
		fmt.Fprintf(stderr, "look %d/%d after round %d: %s\n", k, len(plan.rounds), r, stoppingCounts(st))
		if k == len(plan.rounds) && !st.Stop {
			plannedOut = true
			return true, nil
		}
		return st.Stop, nil
	}
	// Both trials of a round start their pinning at the same CPU, drawn
	// per round: a CPU that is slower than the other falls on both.
	cpuOffset := func(int) int { return rng.IntN(1 << 16) }
	rp := roundPlan{rounds: rounds, budget: opt.budget, retries: opt.retries, look: look, order: order, cpuOffset: cpuOffset}
	fmt.Fprintf(stderr, "gate: %s (base) vs %s (head), paired rounds in random order (seed %#x), up to %d rounds or %s\n",
		targets[0].name, targets[1].name, seed, rounds, opt.budget)
	results, ran, runErr := runRounds(ctx, targets, ss, rf, tf, rp, env, stderr)
	if plannedOut {
		ran.Why = "looks"
	}
	if err := writeTargetResults(rf.output, targets, results, runErr, stderr); err != nil {
		return err
	}
	if results[0] == nil || results[1] == nil {
		return infra(fmt.Errorf("no round finished on both targets"))
	}
	// The budget ended the run between looks: the rounds since the last
	// look get the next planned look (its place depends on time, not on
	// any round's outcome).
	if last == nil || lastRound != ran.Rounds {
		k := lastLook + 1
		if plan != nil && k > len(plan.rounds) {
			k = len(plan.rounds)
		}
		if last, err = report.Compare(results[0], results[1], options(k)); err != nil {
			return compareError(err)
		}
	}
	last.Run = &report.RunInfo{Rounds: ran.Rounds, Seconds: ran.Elapsed.Seconds(), Stop: last.Stopping(ran.Why != "decided")}
	fmt.Fprintf(stderr, "gate: %s\n", stopReason(ran, last.Run.Stop, opt.budget))
	m := last.Matrix()
	if err := writeReports(m, outs, stdout, stderr); err != nil {
		return err
	}
	return verdictError(m, f.strict, "gate", stderr)
}

// stoppingCounts words a look's tally: "1 gated, 1 undecided, 0 regressions".
func stoppingCounts(st report.Stopping) string {
	return fmt.Sprintf("%d gated, %d undecided, %d %s", st.Gated, st.Undecided, st.Regressions, pluralS(st.Regressions, "regression", "regressions"))
}

// stopReason says how many rounds ran and why the gate stopped.
func stopReason(ran roundsRun, st report.Stopping, budget time.Duration) string {
	trials := pluralS(ran.Rounds, "trial", "trials")
	switch ran.Why {
	case "decided":
		return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): every gated test decided", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second))
	case "looks":
		return fmt.Sprintf("stopped after %d rounds (%d %s per target, %s): the looks planned for the %s budget are spent; %s", ran.Rounds, ran.Rounds, trials, ran.Elapsed.Round(time.Second), budget, stoppingCounts(st))
	case "budget":
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

// checkVariantKeys puts back, before anything runs, the sysctls a run
// that died left changed (recoverSysctls), then refuses a key this kernel
// lacks (a typo until proven otherwise), is read-only or will not take
// the variant's value (probeVariants): found here, not after the base's
// trials.
func checkVariantKeys(targets []matrixTarget, root string) error {
	if err := recoverSysctls(root); err != nil {
		return err
	}
	for _, t := range targets {
		for _, s := range t.sysctls {
			if _, err := sysctl.Read(root, s.Key); err != nil {
				return usagef("variant %s: %v", t.name, err)
			}
		}
	}
	return probeVariants(targets, root)
}
