package main

import (
	"context"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/report"
)

// gateOptions is what a same-job gate needs besides its flags.
type gateOptions struct {
	budget  time.Duration
	retries int
}

// gatePair runs base and head in paired rounds (engine.PairGate.Gate)
// and gates head against base.
func gatePair(ctx context.Context, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, opt gateOptions, env matrixEnv, stdout, stderr io.Writer) error {
	two := func(n int) error {
		if n != 2 {
			return usagef("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", n)
		}
		return nil
	}
	return inRounds(ctx, "gate", names, rf, tf, f, env, stdout, stderr, two,
		func(targets []engine.Target, _ []string, spec engine.Spec) (*report.Matrix, error) {
			g := &engine.PairGate{Budget: opt.budget, Retries: opt.retries, Rounds: rf.trials, Seed: env.orderSeed, Options: f.options(), Log: stderr}
			return g.Gate(ctx, targets, spec, rf.output)
		})
}
