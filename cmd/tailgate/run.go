package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/report/show"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("run")
	var fl commandFlags
	fl.run.register(fs)
	fl.targets.register(fs)
	var af attachFlags // attach.go
	af.register(fs)
	fs.StringVar(&fl.run.output, "o", "", "write the Result JSON to `FILE`, - for standard output (with several targets: FILE-TARGET.json each)")
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
		"With --pid or --cgroup their tracers measure that process tree or group instead of their workloads.\n\n"+
		helpEnd(exits{"0 the trials ran", exitBadInput + " (an unknown scenario, a plan over --max-time)",
			exitInfraAny + " (privileges, a tracer's attach, a VM)"},
			"tailgate run syscall-read --trials 5 -o read.json",
			"tailgate run timer-1ms --kernel debian:6.1-cloud -o timer.json",
			"tailgate run syscall-read --pid 1234 --duration 5s",
			"tailgate run --shard 1/4 -o shard-1.json"))
	names, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	ss, err := engine.LookupScenarios(names)
	if err != nil {
		return err
	}
	if ss, err = af.apply(ss, len(names) > 0, &fl.targets); err != nil {
		return err
	}
	targets, err := fl.targets.resolve()
	if err != nil {
		return err
	}
	outs := engine.RunOutputs{Path: fl.run.output, Formats: formats, Stdout: stdout, Log: stderr}
	if err := outs.Check(targets); err != nil {
		return err
	}
	outs.Width = termwidth.Of(outs.Table())
	engine.RecoverSysctls(sysctl.Root, stderr)
	spec := fl.run.spec(nil)
	// Every built-in: pass over those this kernel cannot trace (kfunc
	// without fentry or kprobes), saying so; a named one must run.
	spec.SkipUnsupported = len(names) == 0
	work := engine.Work(sh, ss, targets, stderr)
	var planned time.Duration
	for _, w := range work {
		planned += spec.TrialsTime(w)
	}
	if err := fl.run.checkTime(planned, "the trials and warmups of "+english.Count(len(ss), "scenario")+" on "+english.Count(len(targets), "target")); err != nil {
		return err
	}
	return engine.RunEach(ctx, targets, work, spec, outs, progress.New(stderr, progress.Options{Mode: fl.run.progressMode()}))
}
