package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report/show"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// runFlags are the flags run, gate and calibrate share.
type runFlags struct {
	trials   int
	duration time.Duration
	warmup   time.Duration
	// warmupSet says --warmup was given: 0 is a valid override.
	warmupSet bool
	output    string
	// maxTime is the most wall time the plan may take (--max-time).
	maxTime time.Duration
}

// The flags hold what scenario files hold (scenarios.ParseTrials and the
// others).
func (f *runFlags) register(fs *flag.FlagSet) {
	fs.Func("trials", fmt.Sprintf("`N` trials per scenario, 1 to %d (default: the scenario's)", scenarios.MaxTrials), func(s string) (err error) {
		f.trials, err = scenarios.ParseTrials(s)
		return err
	})
	fs.Func("duration", fmt.Sprintf("`duration` of each trial, %s to %s (default: the scenario's)", scenarios.MinDuration, scenarios.ShortDuration(scenarios.MaxDuration)), func(s string) (err error) {
		f.duration, err = scenarios.ParseDuration(s)
		return err
	})
	fs.Func("warmup", "warmup `duration` before the trials, up to "+scenarios.ShortDuration(scenarios.MaxWarmup)+" (default: the scenario's)", func(s string) (err error) {
		f.warmup, err = scenarios.ParseWarmup(s)
		f.warmupSet = err == nil
		return err
	})
	f.maxTime = engine.DefaultMaxTime
	fs.Func("max-time", "the most wall `duration` the plan may take, its trials and warmups counted (default "+scenarios.ShortDuration(engine.DefaultMaxTime)+"); a longer plan is refused before it starts", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a duration such as 6h or 90m")
		}
		f.maxTime = d
		return nil
	})
}

// checkTime refuses a plan of planned wall time over --max-time
// (engine.CheckTime).
func (f *runFlags) checkTime(planned time.Duration, what string) error {
	return engine.CheckTime(planned, f.maxTime, what)
}

// lookupScenarios resolves names or paths (scenarios.LookupAll); none
// means every built-in. What does not resolve is a usage error.
func lookupScenarios(names []string) ([]*scenarios.Scenario, error) {
	ss, err := scenarios.LookupAll(names)
	if err != nil {
		return nil, &usageError{Err: err}
	}
	return ss, nil
}

// spec is what the flags ask of every trial of ss.
func (f *runFlags) spec(ss []*scenarios.Scenario) engine.Spec {
	return engine.Spec{Scenarios: ss, Trials: f.trials, Duration: f.duration, Warmup: f.warmup, WarmupSet: f.warmupSet}
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("run")
	var f runFlags
	f.register(fs)
	var tf targetFlags
	tf.register(fs)
	var af attachFlags // attach.go
	af.register(fs)
	fs.StringVar(&f.output, "o", "", "write the Result JSON to `FILE`, - for standard output (with several targets: FILE-TARGET.json each)")
	var sh *shard.Spec
	fs.Func("shard", "run only shard `i/n` of the scenario × target work (for a CI matrix; combine with tailgate merge)", func(s string) error {
		p, err := shard.Parse(s)
		sh = &p
		return err
	})
	var formats show.Outputs
	fs.Var(&formats, "format", "also write the Result as tailgate show does, `FORMAT[=FILE]`: "+strings.Join(show.FormatNames(), ", ")+" (repeatable; without =FILE to standard output, the table then to standard error)")
	cmdline.SetUsage(fs, stdout, "usage: tailgate run [SCENARIO...] [--kernel SPEC]... [--target NAME]... [--vm] [--trials N] [--duration D] [--warmup D] [--shard i/n] [-o FILE] [--format FORMAT[=FILE]]...\n"+
		"       tailgate run [SCENARIO...] --pid PID | --cgroup PATH [--trials N] [--duration D] [-o FILE]\n\n"+
		"SCENARIO is a built-in name (see 'tailgate list') or a YAML file; none runs every built-in.\n"+
		"Without --kernel, --target or --vm the scenarios run on this kernel.\n"+
		"With --pid or --cgroup their tracers measure that process tree or group instead of their workloads.\n\n")
	names, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if ss, err = af.apply(ss, len(names) > 0, &tf); err != nil {
		return err
	}
	targets, err := tf.targets()
	if err != nil {
		return err
	}
	outs := engine.RunOutputs{Path: f.output, Formats: formats, Stdout: stdout, Log: stderr}
	if err := outs.Check(targets); err != nil {
		return err
	}
	engine.RecoverSysctls(sysctl.Root, stderr)
	spec := f.spec(nil)
	// Every built-in: pass over those this kernel cannot trace (kfunc
	// without fentry or kprobes), saying so; a named one must run.
	spec.SkipUnsupported = len(names) == 0
	work := engine.Work(sh, ss, targets, stderr)
	var planned time.Duration
	for _, w := range work {
		planned += spec.TrialsTime(w)
	}
	if err := f.checkTime(planned, "the trials and warmups of "+english.Count(len(ss), "scenario")+" on "+english.Count(len(targets), "target")); err != nil {
		return err
	}
	return engine.RunEach(ctx, targets, work, spec, outs, progress.New(stderr))
}
