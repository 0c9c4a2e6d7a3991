package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report/render"
)

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runGate(ctx, args, stdout, stderr, roundsEnv{sysctlRoot: sysctl.Root})
}

var gateUsage = `usage: tailgate gate [SCENARIO...] --kernel BASE --kernel HEAD [--budget D] [--trials N] [report flags]
       tailgate gate [SCENARIO...] --variant BASE --variant HEAD [--budget D] [--trials N] [report flags]
       tailgate gate [SCENARIO...] --baseline DIR|FILE [--save-baseline] [--kernel SPEC | --target NAME | --vm] [--trials N] [--duration D]
       tailgate gate --candidate RESULT --baseline DIR|FILE [--save-baseline] [report flags]

Runs the scenarios (none: every built-in) and gates the head against the base.

Two targets (the same job, what CI should call): given as flags, base
first (--kernel, --target or --variant; Result files go to 'tailgate
compare'), run once each per round in an order drawn at random, so that
drift and the machine fall on both alike and each round is a pair. On
the host, with a built-in loop, the round's two trials take turns in
slices of --slice (25ms), so that a burst of other work falls on both
(a variant with sysctls runs whole unless --slice-sysctls writes them
around its runs of slices). After three rounds
the looks are planned within --budget (rounds 12, 15, 19, 24, 30, ...);
each compares the rounds' per-trial quantiles by an exact signed-rank test
and the gate stops once every gated test is decided (a regression, or no
change), a regression is confirmed, or the looks or --budget are spent;
what is still open is inconclusive. Targets, as matrix takes them:
` + targetKinds + `
--baseline: against a stored Result (history, a dedicated quiet machine);
its interval is widened by the between-run spread 'tailgate calibrate' stored.
--candidate: gate a Result made earlier (merged CI shards) instead of running.

What is gated: the base's gate block (never the head's: a difference is
warned of), else p99 of its primary metrics (tailgate list); everything
else is reported. A head lacking a gated metric is a broken run (exit 3).
The family-wise false-alarm rate over every gated test of the invocation
is held at 1% (Holm), across the looks too.

` + helpEnd(exitsGate,
	"tailgate gate --kernel debian:6.1-cloud --kernel ./bzImage timer-1ms",
	"tailgate gate --variant base --variant tuned:kernel.timer_migration=0 \\",
	"    timer-1ms --budget 5m",
	"tailgate gate syscall-read --baseline baselines/ --save-baseline",
	"tailgate gate --candidate merged.json --baseline baselines/ --strict")

// gateFlags are gate's: the shared groups, a stored baseline's, and how a
// gate in one job runs its rounds.
type gateFlags struct {
	commandFlags
	baseline  string
	save      bool
	candidate string
	pair      engine.PairGate
}

func (fl *gateFlags) register(fs *flag.FlagSet) {
	fl.run.register(fs)
	fl.targets.register(fs)
	fl.report.register(fs)
	fl.history.register(fs)
	fs.StringVar(&fl.baseline, "baseline", "", "baseline `DIR` (one file per scenario and target) or a single Result FILE")
	fs.BoolVar(&fl.save, "save-baseline", false, "store this run as the baseline where none exists, and refresh existing ones when the gate passes")
	fs.StringVar(&fl.run.output, "o", "", "also write the Result to `FILE`; a gate of two targets writes one to FILE-NAME.json for each (-o r.json --variant base --variant head: r-base.json and r-head.json)")
	fs.StringVar(&fl.candidate, "candidate", "", "gate this Result `FILE` (e.g. merged CI shards) instead of running")
	fl.targets.registerVariant(fs, "a host target `NAME[:KEY=VALUE,...]`: this host, "+variantKeys+" (repeatable)")
	fs.DurationVar(&fl.pair.Budget, "budget", engine.DefaultBudget, "with two targets: the most wall time to spend on rounds before the undecided tests are called inconclusive")
	fs.IntVar(&fl.pair.Retries, "retries", 1, "with two targets: run a round again this many times when it breaks (a guest oops)")
	fs.DurationVar(&fl.pair.Slice, "slice", engine.DefaultSlice, "with two host targets and a built-in loop: the round's two trials take turns in slices of at most this long, so that a burst of other work falls on both; 0 runs each trial whole")
	fs.BoolVar(&fl.pair.SliceSysctls, "slice-sysctls", false, "with --slice: a --variant's sysctls are written as each of its runs of slices starts and put back as it ends, so that a variant with sysctls takes turns too; for settings that act at once and leave no state behind for the other side's next slice")
}

func runGate(ctx context.Context, args []string, stdout, stderr io.Writer, env roundsEnv) error {
	fs := cmdline.NewFlagSet("gate")
	cmdline.SetUsage(fs, stdout, gateUsage)
	var fl gateFlags
	fl.register(fs)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if n := len(fl.targets.Order); n >= 2 || (n == 1 && fl.baseline == "") {
		if fl.baseline != "" || fl.candidate != "" || fl.save {
			return usagef("two targets gate the head against the base in this job; --baseline, --candidate and --save-baseline are for stored baselines: give one or the other")
		}
		return gateInRounds(ctx, pos, &fl, env, stdout, stderr)
	}
	if pairOnly := cmdline.Given(fs, "variant", "budget", "retries", "slice", "slice-sysctls"); fl.baseline != "" && len(pairOnly) > 0 {
		return usagef("%s only apply to a gate of two targets in one job (BASE HEAD); --baseline gates one run against a stored Result", strings.Join(pairOnly, ", "))
	}
	if fl.baseline == "" {
		return usagef("give two targets, base then head (e.g. --kernel A --kernel B or --variant base --variant tuned:KEY=VALUE), or a stored --baseline DIR|FILE; to create one: tailgate gate %s--baseline DIR --save-baseline", engine.ShellArgs(pos))
	}
	return gateStored(ctx, fs, pos, &fl, stdout, stderr)
}

// gateInRounds gates the head against the base in one job: both run in
// paired rounds (engine.PairGate) once everything that could fail later
// was checked (engine.CheckRounds) and the rounds fit --max-time.
func gateInRounds(ctx context.Context, names []string, fl *gateFlags, env roundsEnv, stdout, stderr io.Writer) (err error) {
	g := fl.pair
	r, err := fl.forRounds(names, env, &g.RoundsOptions)
	if err != nil {
		return err
	}
	defer func() { writeJUnitErrors(r.outs, "gate", err, stderr) }()
	if err := engine.CheckPair(len(r.targets)); err != nil {
		return err
	}
	g.Rounds, g.Seed, g.Log = fl.run.trials, env.orderSeed, stderr
	// The budget bounds the rounds; --trials fixes them, perhaps fewer.
	if err := fl.run.checkTime(g.PlannedTime(r.spec, len(r.targets))); err != nil {
		return err
	}
	if err := engine.CheckRounds(r.targets, r.spec, g.Output, env.sysctlRoot, stderr); err != nil {
		return err
	}
	m, err := g.Gate(ctx, r.targets, r.spec)
	engine.AttachTrends(ctx, m, fl.history.store, fl.history.opt, stderr)
	if err != nil {
		return err
	}
	return fl.report.verdict(m, r.outs, "gate", stdout, stderr)
}

// gateStored gates one run, or the Result --candidate names, against the
// stored baselines (engine.StoredGate), and saves it as --save-baseline
// says once the report is written.
func gateStored(ctx context.Context, fs *flag.FlagSet, pos []string, fl *gateFlags, stdout, stderr io.Writer) (err error) {
	outs, err := fl.report.resolveOutputs(fl.run.verbose)
	if err != nil {
		return err
	}
	defer func() { writeJUnitErrors(outs, "gate", err, stderr) }()
	g := engine.StoredGate{Store: engine.Store{Path: fl.baseline, Log: stderr}, Save: fl.save, Options: fl.report.options(), Strict: fl.report.Strict,
		Progress: fl.run.progressMode()}
	var res *result.Result
	if fl.candidate != "" {
		res, err = gateCandidate(fs, pos, fl.candidate)
	} else {
		res, err = gateRun(ctx, g, fl, pos)
	}
	if err != nil {
		return err
	}
	j, err := g.Judge(ctx, res)
	if err != nil {
		return err
	}
	if j.Matrix != nil {
		engine.AttachTrends(ctx, j.Matrix, fl.history.store, fl.history.opt, stderr)
		if err := render.WriteOutputs(j.Matrix, outs, stdout, stderr); err != nil {
			return err
		}
	}
	if err := j.Keep(ctx); err != nil {
		return err
	}
	if j.Matrix == nil {
		fmt.Fprintf(stdout, "No baselines to compare with yet: this run is now the baseline. Pass.\n")
		return nil
	}
	return fl.report.verdict(j.Matrix, nil, "gate", stdout, stderr) // written before the save
}

// gateCandidate loads the Result that --candidate names. The run's own
// flags would be silently ignored, so they are refused.
func gateCandidate(fs *flag.FlagSet, pos []string, path string) (*result.Result, error) {
	if len(pos) > 0 {
		return nil, usagef("--candidate gates a Result made earlier: name no scenarios (got %s)", strings.Join(pos, " "))
	}
	runOnly := cmdline.Given(fs, "trials", "duration", "warmup", "o",
		"kernel", "target", "targets", "vm", "cmdline", "vcpus", "memory", "accel", "deadline", "kernel-cache", "phases")
	if len(runOnly) > 0 {
		return nil, usagef("%s only apply to a run; --candidate does not run", strings.Join(runOnly, ", "))
	}
	return engine.LoadResult(path, "candidate")
}

// gateRun runs the scenarios pos names on the one target the flags give,
// once g found their baselines (engine.StoredGate.Run), and writes the
// Result where -o says.
func gateRun(ctx context.Context, g engine.StoredGate, fl *gateFlags, pos []string) (*result.Result, error) {
	ss, err := fl.report.lookup(pos)
	if err != nil {
		return nil, err
	}
	if err := engine.CheckOutput(fl.run.output); err != nil {
		return nil, err
	}
	targets, err := fl.targets.resolve()
	if err != nil {
		return nil, err
	}
	return g.RunOne(ctx, targets, fl.run.spec(ss), fl.run.output, fl.run.maxTime, pos)
}
