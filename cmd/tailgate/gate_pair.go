package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report"
)

// The same-job gate: base and head run in alternating rounds on this
// machine, and after rounds on a fixed schedule the comparison looks at
// what it has. It stops as soon as every gated test is decided (a
// regression, or no change: the interval inside ±threshold), or when the
// budget or the round cap is spent; what is still open is inconclusive.
// Each look spends part of the false-alarm budget (report.Sequential), so
// looking early and often keeps the family-wise rate at its level.

// Gate defaults, chosen by measurement (BENCHMARKS.md, "Time to a
// verdict").
const (
	// DefaultBudget is the wall time a same-job gate may spend on rounds.
	DefaultBudget = 3 * time.Minute
	// maxGateRounds caps the rounds of a same-job gate.
	maxGateRounds = 200
)

// gateLooks is the same-job gate's stopping rule: looks after rounds 6,
// 9, 12, 17, 24, ... (report.Sequential has why).
var gateLooks = report.Sequential{Growth: report.GateLookGrowth}

// pairEnv is what a same-job gate touches outside itself; tests replace it.
type pairEnv = matrixEnv

// gateOptions is what a same-job gate needs besides its flags.
type gateOptions struct {
	budget  time.Duration
	retries int
}

// gatePair runs base and head in alternating rounds and gates head
// against base.
func gatePair(ctx context.Context, args, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, opt gateOptions, env pairEnv, stdout, stderr io.Writer) error {
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
	targets, err := matrixTargets(args, tf)
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
	if rf.trials > 0 {
		rounds = rf.trials
	}
	looks := gateLooks.Rounds(rounds)
	var last *report.Report
	var lastLook, lastRound int
	look := func(r int, res []*result.Result) (bool, error) {
		k := gateLooks.LookAt(r)
		if k == 0 || res[0] == nil || res[1] == nil {
			return false, nil
		}
		o := f.options()
		o.Look = k
		rep, err := report.Compare(res[0], res[1], o)
		if err != nil {
			return false, &usageError{err}
		}
		last, lastLook, lastRound = rep, k, r
		st := rep.Stopping(false)
		fmt.Fprintf(stderr, "look %d after round %d: %s\n", k, r, stoppingCounts(st))
		return st.Stop, nil
	}
	plan := roundPlan{rounds: rounds, budget: opt.budget, retries: opt.retries, look: look}
	fmt.Fprintf(stderr, "gate: %s (base) vs %s (head), alternating rounds, up to %d rounds or %s; looks after rounds %s\n",
		targets[0].name, targets[1].name, rounds, opt.budget, joinInts(looks))
	results, ran, runErr := runRounds(ctx, targets, ss, rf, tf, plan, env, stderr)
	if err := writeTargetResults(rf.output, targets, results, runErr, stderr); err != nil {
		return err
	}
	if results[0] == nil || results[1] == nil {
		return infra(fmt.Errorf("no round finished on both targets"))
	}
	// The budget or the cap ended the run between looks: the data since the
	// last look get a look of their own.
	if last == nil || lastRound != ran.Rounds {
		o := f.options()
		o.Look = lastLook + 1
		if last, err = report.Compare(results[0], results[1], o); err != nil {
			return &usageError{err}
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

// checkVariantKeys refuses, before anything runs, a sysctl key this kernel
// lacks: a typo until proven otherwise.
func checkVariantKeys(targets []matrixTarget, root string) error {
	for _, t := range targets {
		for _, s := range t.sysctls {
			if _, err := sysctl.Read(root, s.Key); err != nil {
				return usagef("variant %s: %v", t.name, err)
			}
		}
	}
	return nil
}
