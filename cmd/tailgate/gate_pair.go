package main

import (
	"context"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
)

// gateOptions is what a same-job gate needs besides its flags.
type gateOptions struct {
	budget  time.Duration
	retries int
}

// gatePair runs base and head in paired rounds (engine.PairGate) and
// gates head against base.
func gatePair(ctx context.Context, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, opt gateOptions, env matrixEnv, stdout, stderr io.Writer) (err error) {
	ss, err := f.lookup(names)
	if err != nil {
		return err
	}
	outs, err := f.resolveOutputs()
	if err != nil {
		return err
	}
	defer func() { writeJUnitErrors(outs, "gate", err, stderr) }()
	targets, _, err := matrixTargets(tf, env)
	if err != nil {
		return err
	}
	if len(targets) != 2 {
		return usagef("a gate compares two targets, base then head (--kernel, --target or --variant), got %d; for more, use tailgate matrix", len(targets))
	}
	spec := rf.spec(ss)
	if err := engine.CheckRounds(targets, spec, rf.output, env.sysctlRoot, stderr); err != nil {
		return err
	}
	g := &engine.PairGate{Budget: opt.budget, Retries: opt.retries, Rounds: rf.trials, Seed: env.orderSeed, Options: f.options(), Log: stderr}
	m, err := g.Gate(ctx, targets, spec, rf.output)
	if err != nil {
		return err
	}
	return f.verdict(m, outs, "gate", stdout, stderr)
}
