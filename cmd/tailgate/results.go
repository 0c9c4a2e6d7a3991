package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// roundPlan says how many interleaved rounds to run and when to stop
// early.
type roundPlan struct {
	// rounds is the most rounds to run.
	rounds  int
	retries int
	// budget, when > 0, starts no round once this much time has passed.
	budget time.Duration
	// look, when set, is called after every round with each target's
	// rounds so far merged; it returns true to stop.
	look func(round int, results []*result.Result) (bool, error)
	// order, when set, gives the order of the targets in round r (a
	// permutation of their indexes); roundOrder otherwise.
	order func(r int) []int
	// cpuOffset, when set, gives the CPU offset every target's host
	// trials of round r are pinned from (runner.Request.CPUOffset).
	cpuOffset func(r int) int
}

// roundsRun says how a run of rounds went: how many ran and why it ended.
type roundsRun struct {
	Rounds  int
	Elapsed time.Duration
	// Why is "decided", "budget" or "rounds".
	Why string
}

// plannedRounds is the number of rounds a fixed run makes: --trials, else
// the most trials any scenario asks for.
func plannedRounds(f *runFlags, ss []*scenarios.Scenario) int {
	rounds := f.trials
	if rounds == 0 {
		for _, s := range ss {
			rounds = max(rounds, s.Trials)
		}
	}
	return max(rounds, 1)
}

// roundOrder is the order the targets run in round r (1-based): forwards
// in odd rounds, backwards in even ones (A B, B A, A B, ... for two), so
// that a drift in the machine over a pair of rounds falls on every target
// alike, and no target always runs right after another.
func roundOrder(r, n int) []int {
	out := make([]int, n)
	for i := range out {
		if r%2 == 1 {
			out[i] = i
		} else {
			out[i] = n - 1 - i
		}
	}
	return out
}

// runRounds runs the interleaved trials: in round r every target runs one
// trial of each scenario that wants at least r (all of them when --trials
// is given or the plan looks at the data), targets in roundOrder. It
// returns each target's rounds merged (nil for a target with none), how the
// rounds went, and the first error, after which no further round starts.
func runRounds(ctx context.Context, targets []matrixTarget, ss []*scenarios.Scenario, f *runFlags, tf *targetFlags, plan roundPlan, env matrixEnv, stderr io.Writer) ([]*result.Result, roundsRun, error) {
	rounds := max(plan.rounds, 1)
	inputs := make([][]result.Input, len(targets))
	merged := func() ([]*result.Result, error) {
		out := make([]*result.Result, len(targets))
		for i, in := range inputs {
			if len(in) == 0 {
				continue
			}
			r, err := result.Merge(in)
			if err != nil {
				return out, infra(fmt.Errorf("target %s: %w", targets[i].name, err))
			}
			out[i] = fixTrials(r)
		}
		return out, nil
	}
	start := time.Now()
	ran := roundsRun{Why: "rounds"}
	p := progress.New(stderr)
	defer p.Done()
	total := rounds * len(targets)
	for r := 1; r <= rounds; r++ {
		if plan.budget > 0 && r > 1 && time.Since(start) >= plan.budget {
			ran.Why = "budget"
			break
		}
		var round []*scenarios.Scenario
		for _, s := range ss {
			if f.trials > 0 || plan.look != nil || s.Trials >= r {
				round = append(round, s)
			}
		}
		order := roundOrder(r, len(targets))
		if plan.order != nil {
			order = plan.order(r)
		}
		var offset *int
		if plan.cpuOffset != nil {
			o := plan.cpuOffset(r)
			offset = &o
		}
		for k, ti := range order {
			t := targets[ti]
			done := (r-1)*len(targets) + k
			label := fmt.Sprintf("round %d/%d, %s", r, rounds, t.name)
			req := runner.Request{
				Scenarios: round, Trials: 1, Duration: f.duration, Warmup: f.warmup, WarmupSet: f.warmupSet,
				Target:    result.Target{Name: t.name, Kind: "host"},
				CPUOffset: offset,
				Progress: func(e runner.Event) {
					switch {
					case e.Phase == "attach" || e.Phase == "warmup":
						p.Step(done, total, fmt.Sprintf("%s: %s: %s", label, e.Scenario, e.Phase), "")
					case e.Phase == "trial" && e.Detail != "":
						p.Step(done, total, fmt.Sprintf("%s: %s: trial done", label, e.Scenario), e.Detail)
					}
				},
			}
			if t.vm != nil {
				p.Step(done, total, label+": booting "+t.vm.Kernel, "")
			}
			res, err := runTrial(ctx, t, tf, req, p, env)
			for attempt := 1; attempt <= plan.retries && retryable(ctx, err); attempt++ {
				// A broken round (a guest oops, a garbled result) measured
				// nothing: run it again rather than lose the run.
				p.Line(fmt.Sprintf("%s: %v; retrying the round (%d/%d)", label, err, attempt, plan.retries))
				res, err = runTrial(ctx, t, tf, req, p, env)
			}
			if err == nil && res != nil && len(res.Scenarios) > 0 {
				if plan.order != nil {
					// Only a random order within rounds makes a round's
					// trials a pair the sign-flip test may rely on.
					stampRound(res, r, k)
				}
				inputs[ti] = append(inputs[ti], result.Input{Path: fmt.Sprintf("%s round %d", t.name, r), Result: res})
			}
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				out, merr := merged()
				ran.Rounds, ran.Elapsed = r-1, time.Since(start)
				var rf *restoreFailure
				switch {
				case errors.As(err, &rf):
					return out, ran, infra(err)
				case errors.Is(err, context.Canceled) || ctx.Err() != nil:
					return out, ran, infra(fmt.Errorf("interrupted in round %d/%d on %s; sysctls restored, tracers detached, no VM left running", r, rounds, t.name))
				}
				return out, ran, errors.Join(fmt.Errorf("round %d/%d on %s: %w", r, rounds, t.name, classify(err)), merr)
			}
		}
		ran.Rounds, ran.Elapsed = r, time.Since(start)
		if plan.look != nil {
			out, err := merged()
			if err != nil {
				return out, ran, err
			}
			stop, err := plan.look(r, out)
			if err != nil {
				return out, ran, err
			}
			if stop {
				ran.Why = "decided"
				return out, ran, nil
			}
		}
	}
	out, err := merged()
	ran.Elapsed = time.Since(start)
	return out, ran, err
}

// stampRound records on every trial of res the round it ran in and its
// place in the round's order: what pairs base's and head's trials.
func stampRound(res *result.Result, round, slot int) {
	for i := range res.Scenarios {
		for _, m := range res.Scenarios[i].Metrics {
			if m == nil {
				continue
			}
			for j := range m.Trials {
				m.Trials[j].Round, m.Trials[j].Slot = round, slot
			}
		}
	}
}

// writeTargetResults writes each target's Result where -o path says
// (path-TARGET.json), what was measured kept even when the rounds were cut
// short (runErr), and returns runErr or the first write error.
func writeTargetResults(path string, targets []matrixTarget, results []*result.Result, runErr error, stderr io.Writer) error {
	for i, t := range targets {
		out := outputPath(path, t.execTarget, len(targets))
		if out == "" || results[i] == nil {
			continue
		}
		if err := result.Write(out, results[i]); err != nil {
			return errors.Join(runErr, infra(fmt.Errorf("write result: %w", err)))
		}
		what := "result"
		if runErr != nil {
			what = "partial result"
		}
		fmt.Fprintf(stderr, "%s of %s written to %s\n", what, t.name, out)
	}
	return runErr
}

// checkTargetOutputs checks, before anything runs, where -o path puts each
// target's Result: one file per target, so standard output will not do.
func checkTargetOutputs(path string, targets []matrixTarget) error {
	if path == stdoutPath {
		return usagef("-o - writes one Result, and %d targets make %d: give -o FILE (each target's goes to FILE-TARGET.json)", len(targets), len(targets))
	}
	for _, t := range targets {
		if err := checkOutputPath(outputPath(path, t.execTarget, len(targets))); err != nil {
			return err
		}
	}
	return nil
}
