package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report"
)

const matrixUsage = `usage: tailgate matrix TARGET... [SCENARIO...] [flags]

Runs the scenarios on every target, trials interleaved, the order
alternating (round 1: A B C, round 2: C B A, round 3: A B C, ...) so that
drift in the machine hits all targets alike and no target always runs
right after another, then compares every target with the first, the
reference, with the same statistics as 'tailgate compare'.

Targets, in the order given (at least two):
` + targetKinds + `
  tailgate matrix --kernel debian:6.1-generic --kernel debian:6.1-rt timer-1ms
  tailgate matrix --variant base --variant 'nomig:kernel.timer_migration=0' timer-1ms
  tailgate matrix --kernel debian:6.1-cloud --kernel 'debian:6.1-cloud nohz_full=1' timer-1ms

A VM target boots once per round; a host variant attaches its tracers once
per round. Each round runs the scenarios' warmup, then one trial.
exit 0 no regression against the reference, 1 a regression (or, with
--strict, an inconclusive verdict), 2 bad usage, 3 a broken run or a sysctl
that could not be restored.

`

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

// matrixEnv is what a matrix or a same-job gate touches outside itself;
// tests replace it.
type matrixEnv struct {
	// wrap, when set, stands in for each target of a host or a VM (inside
	// a variant's sysctls).
	wrap func(engine.Target) engine.Target
	// sysctlRoot is /proc/sys.
	sysctlRoot string
	// orderSeed, when non-zero, seeds a same-job gate's random order
	// within rounds (tests); otherwise the system's random source does.
	orderSeed uint64
}

func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runMatrix(ctx, args, stdout, stderr, matrixEnv{sysctlRoot: sysctl.Root})
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer, env matrixEnv) error {
	fs := cmdline.NewFlagSet("matrix")
	var f runFlags
	f.register(fs)
	var tf targetFlags
	tf.register(fs)
	var rf reportFlags
	rf.register(fs)
	tf.registerVariant(fs, "a host variant `NAME[:KEY=VALUE,...]`: this host, "+variantKeys+" (repeatable)")
	fs.StringVar(&f.output, "o", "", "write each target's merged Result to `FILE`-TARGET.json")
	retries := fs.Int("retries", 1, "run a round again this many times when it breaks (a guest oops, a garbled result); its broken try is discarded")
	cmdline.SetUsage(fs, stdout, matrixUsage)
	names, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if *retries < 0 {
		return usagef("--retries must not be negative, got %d", *retries)
	}
	atLeastTwo := func(n int) error {
		if n < 2 {
			return usagef("a matrix needs at least two targets (--kernel, --target or --variant), got %d; see tailgate matrix -h", n)
		}
		return nil
	}
	planned := func(n int, spec engine.Spec) (time.Duration, string) {
		return spec.RoundsTime(n), fmt.Sprintf("%s of a trial and its warmup of each of %s on %s", english.Count(engine.PlannedRounds(spec), "round"), english.Count(len(spec.Scenarios), "scenario"), english.Count(n, "target"))
	}
	return inRounds(ctx, "matrix", names, &f, &tf, &rf, env, stdout, stderr, atLeastTwo, planned,
		func(targets []engine.Target, descr []string, spec engine.Spec) (*report.Matrix, error) {
			plan := engine.Plan{Rounds: engine.PlannedRounds(spec), Retries: *retries}
			if engine.AtOnce(targets) == "" {
				plan.Jobs = engine.Jobs(tf.Jobs)
			}
			return engine.Matrix(ctx, targets, descr, spec, plan, f.output, rf.options(), stderr)
		})
}

// inRounds is what a matrix and a same-job gate share around their
// rounds: the scenarios names, every output checked first (the formats
// render a matrix as they render a comparison), the targets in their
// order (count refuses how many there are), the checks before any round
// (engine.CheckRounds), the rounds' wall time within --max-time (planned
// says how long the rounds on n targets take, and what of); then run's
// rounds, and their verdict written. command names the JUnit document of
// an infrastructure failure.
func inRounds(ctx context.Context, command string, names []string, rf *runFlags, tf *targetFlags, f *reportFlags, env matrixEnv, stdout, stderr io.Writer,
	count func(int) error, planned func(n int, spec engine.Spec) (time.Duration, string), run func([]engine.Target, []string, engine.Spec) (*report.Matrix, error)) (err error) {
	ss, err := f.lookup(names)
	if err != nil {
		return err
	}
	outs, err := f.resolveOutputs()
	if err != nil {
		return err
	}
	defer func() { writeJUnitErrors(outs, command, err, stderr) }()
	targets, descr, err := matrixTargets(tf, env)
	if err != nil {
		return err
	}
	if err := count(len(targets)); err != nil {
		return err
	}
	spec := rf.spec(ss)
	if err := rf.checkTime(planned(len(targets), spec)); err != nil {
		return err
	}
	if err := engine.CheckRounds(targets, spec, rf.output, env.sysctlRoot, stderr); err != nil {
		return err
	}
	m, err := run(targets, descr, spec)
	if err != nil {
		return err
	}
	return f.verdict(m, outs, command, stdout, stderr)
}

// matrixTargets builds the targets in the order their flags were given
// (the first is the reference), and describes each. The VM settings must
// serve every target: --target takes its from the targets file.
func matrixTargets(tf *targetFlags, env matrixEnv) ([]engine.Target, []string, error) {
	if err := tf.check(true); err != nil {
		return nil, nil, err
	}
	tf.HostRunner = runScenarios
	return tf.InOrder(env.sysctlRoot, env.wrap)
}
