package main

import (
	"context"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// gateOptions is what a same-job gate needs besides its flags.
type gateOptions struct {
	budget  time.Duration
	retries int
}

// gatePair runs base and head in paired rounds (engine.PairGate) and
// gates head against base.
func gatePair(ctx context.Context, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, opt gateOptions, env matrixEnv, stdout, stderr io.Writer) (err error) {
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if err := f.checkThresholds(scenarios.AllMetrics(ss)); err != nil {
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
	if err := engine.CheckVariants(targets, env.sysctlRoot, stderr); err != nil {
		return err
	}
	spec := rf.spec(ss)
	if err := spec.Check(); err != nil {
		return err
	}
	if err := engine.CheckTargetOutputs(rf.output, targets); err != nil {
		return err
	}
	g := &engine.PairGate{Budget: opt.budget, Retries: opt.retries, Rounds: rf.trials, Seed: env.orderSeed, Options: f.options(), Log: stderr}
	results, runErr := g.Run(ctx, targets, spec)
	if err := engine.WriteTargetResults(rf.output, targets, results, runErr, stderr); err != nil {
		return err
	}
	rep, err := g.Report(results)
	if err != nil {
		return err
	}
	m := rep.Matrix()
	if err := report.WriteOutputs(m, outs, stdout, stderr); err != nil {
		return err
	}
	return verdictError(m, f.strict, "gate", stderr)
}
