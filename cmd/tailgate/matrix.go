package main

import (
	"context"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
)

var matrixUsage = `usage: tailgate matrix TARGET... [SCENARIO...] [flags]

Runs the scenarios on every target, trials interleaved, the order
alternating (round 1: A B C, round 2: C B A, round 3: A B C, ...) so that
drift in the machine hits all targets alike and no target always runs
right after another, then compares every target with the first, the
reference, with the same statistics as 'tailgate compare'.

Targets, in the order given (at least two):
` + targetKinds + `
A VM target boots once per round; a host variant attaches its tracers once
per round. Each round runs the scenarios' warmup, then one trial.

` + helpEnd(exits{"0 no regression against the reference",
	"1 a regression (or, with --strict, an inconclusive verdict)", exitBadInput,
	"3 a broken run or a sysctl that could not be restored"},
	"tailgate matrix --kernel debian:6.1-generic --kernel debian:6.1-rt timer-1ms",
	"tailgate matrix --variant base --variant nomig:kernel.timer_migration=0 \\",
	"    timer-1ms",
	"tailgate matrix --kernel debian:6.1-cloud \\",
	"    --kernel 'debian:6.1-cloud nohz_full=1' timer-1ms")

// targetKinds are the targets a matrix and a same-job gate take, for
// their usage.
const targetKinds = `  --kernel 'SPEC [CMDLINE]'   a VM booting SPEC (see 'tailgate kernels list'),
                              with CMDLINE appended to its kernel command line
  --target NAME               a VM target from the targets file
  --variant NAME[:KEY=VALUE[,KEY=VALUE...]]
                              this host, with the sysctls set for the variant's
                              trials and restored after each; --variant NAME
                              alone is the host as it is; dir=PATH runs the
                              scenario file from PATH (a checkout of the same
                              tree), env.NAME=VALUE adds to the exec
                              workload's environment
`

func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runMatrix(ctx, args, stdout, stderr, roundsEnv{sysctlRoot: sysctl.Root})
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer, env roundsEnv) (err error) {
	fs := cmdline.NewFlagSet("matrix")
	var fl commandFlags
	fl.run.register(fs)
	fl.targets.register(fs)
	fl.report.register(fs)
	fl.targets.registerVariant(fs, "a host variant `NAME[:KEY=VALUE,...]`: this host, "+variantKeys+" (repeatable)")
	fs.StringVar(&fl.run.output, "o", "", "write each target's merged Result to `FILE`-TARGET.json")
	o := engine.RoundsOptions{Log: stderr}
	fs.IntVar(&o.Retries, "retries", 1, "run a round again this many times when it breaks (a guest oops, a garbled result); its broken try is discarded")
	cmdline.SetUsage(fs, stdout, matrixUsage)
	names, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if o.Retries < 0 {
		return usagef("--retries must not be negative, got %d", o.Retries)
	}
	r, err := fl.forRounds(names, env, &o)
	if err != nil {
		return err
	}
	defer func() { writeJUnitErrors(r.outs, "matrix", err, stderr) }()
	if len(r.targets) < 2 {
		return usagef("a matrix needs at least two targets (--kernel, --target or --variant), got %d; see tailgate matrix -h", len(r.targets))
	}
	if err := fl.run.checkTime(r.spec.RoundsTime(len(r.targets))); err != nil {
		return err
	}
	if err := engine.CheckRounds(r.targets, r.spec, o.Output, env.sysctlRoot, stderr); err != nil {
		return err
	}
	m, err := engine.Matrix(ctx, r.targets, r.descr, r.spec, o)
	if err != nil {
		return err
	}
	return fl.report.verdict(m, r.outs, "matrix", stdout, stderr)
}
