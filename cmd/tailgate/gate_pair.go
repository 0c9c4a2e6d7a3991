package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
)

// gatePair runs base and head in paired rounds (g.Gate, its budget and
// retries as the flags set them) and gates head against base.
func gatePair(ctx context.Context, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, h *historyLine, g *engine.PairGate, env matrixEnv, stdout, stderr io.Writer) error {
	two := func(n int) error {
		if n != 2 {
			return usagef("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", n)
		}
		return nil
	}
	// The budget bounds the rounds; --trials fixes them, perhaps fewer.
	planned := func(n int, spec engine.Spec) (time.Duration, string) {
		if rf.trials > 0 && spec.RoundsTime(n) < g.Budget {
			return spec.RoundsTime(n), fmt.Sprintf("%s of a trial and its warmup of each of %s on %s", english.Count(rf.trials, "round"), english.Count(len(spec.Scenarios), "scenario"), english.Count(n, "target"))
		}
		return g.Budget, "the rounds' --budget"
	}
	return inRounds(ctx, "gate", names, rf, tf, f, env, stdout, stderr, two, planned,
		func(targets []engine.Target, _ []string, spec engine.Spec) (*report.Matrix, error) {
			g.Rounds, g.Seed, g.Options, g.Log = rf.trials, env.orderSeed, f.options(), stderr
			if engine.AtOnce(targets) == "" {
				g.Jobs = engine.Jobs(tf.Jobs)
			}
			m, err := g.Gate(ctx, targets, spec, rf.output)
			h.attach(ctx, m, stderr)
			return m, err
		})
}
