package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// commandFlags are the groups of flags the commands share, under one name
// each in every command: fl.run, fl.targets, fl.report, fl.history. A
// command registers the groups it takes.
type commandFlags struct {
	run     runFlags
	targets targetFlags
	report  reportFlags
	history historyLine
}

// rounds is what a matrix or a same-job gate reads before its rounds:
// what every trial is asked (the scenarios named, the run flags), the
// report's outputs, and the targets in their order with a description
// each.
type rounds struct {
	spec    engine.Spec
	outs    []render.Output
	targets []engine.Target
	descr   []string
}

// forRounds reads the flags of a matrix or a same-job gate: the scenarios
// names (lookup, the thresholds checked against their metrics), every
// output, checked before anything runs, and the targets (inOrder), whose
// options it sets in o: where their Results go, how they are compared,
// how many boot at once.
func (fl *commandFlags) forRounds(names []string, env roundsEnv, o *engine.RoundsOptions) (rounds, error) {
	ss, err := fl.report.lookup(names)
	if err != nil {
		return rounds{}, err
	}
	outs, err := fl.report.resolveOutputs(fl.run.verbose)
	if err != nil {
		return rounds{}, err
	}
	targets, descr, err := fl.targets.inOrder(env)
	if err != nil {
		return rounds{}, err
	}
	o.Output, o.Compare, o.Progress = fl.run.output, fl.report.options(), fl.run.progressMode()
	if engine.AtOnce(targets) == "" {
		o.Jobs = engine.Jobs(fl.targets.Jobs)
	}
	spec := fl.run.spec(ss)
	// Every built-in (no names) passes over what a target cannot measure,
	// as a run of them does; a scenario named is refused instead.
	spec.SkipUnsupported = len(names) == 0
	return rounds{spec: spec, outs: outs, targets: targets, descr: descr}, nil
}

// runFlags are what a run asks of every trial: run, gate, calibrate and
// matrix take them.
type runFlags struct {
	trials   int
	duration time.Duration
	warmup   time.Duration
	// warmupSet says --warmup was given: 0 is a valid override.
	warmupSet bool
	output    string
	// maxTime is the most wall time the plan may take (--max-time).
	maxTime time.Duration
	// verbose is -v: every step of the progress, as a line.
	verbose bool
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
	fs.BoolVar(&f.verbose, "v", false, verboseUsage)
	f.maxTime = engine.DefaultMaxTime
	fs.Func("max-time", "the most wall `duration` the plan may take, its trials and warmups counted (default "+scenarios.ShortDuration(engine.DefaultMaxTime)+"); a longer plan is refused before it starts", func(s string) (err error) {
		f.maxTime, err = engine.ParseMaxTime(s)
		return err
	})
}

// verboseUsage says what -v does, wherever progress shows.
const verboseUsage = "verbose progress: every step of every trial as a line, with each metric's events (default: on a terminal one line that fills; elsewhere a line per trial and per look); and a text report of every row and warning, gated or not"

// progressMode is how the progress shows: progress.Verbose with -v.
func (f *runFlags) progressMode() progress.Mode { return progress.ModeFor(f.verbose) }

// checkTime refuses a plan of planned wall time over --max-time
// (engine.CheckTime).
func (f *runFlags) checkTime(planned time.Duration, what string) error {
	return engine.CheckTime(planned, f.maxTime, what)
}

// spec is what the flags ask of every trial of ss.
func (f *runFlags) spec(ss []*scenarios.Scenario) engine.Spec {
	return engine.Spec{Scenarios: ss, Trials: f.trials, Duration: f.duration, Warmup: f.warmup, WarmupSet: f.warmupSet}
}

// runScenarios, when set, runs the host's requests in place of runner.Run
// (and its rounds' trials run whole): tests set it to run and gate
// without tracers.
var runScenarios func(context.Context, runner.Request) (*result.Result, error)

// targetFlags choose where scenarios run (engine.TargetChoice): the host
// (default), VMs booting the given kernels, named targets from a targets
// file, host variants. Their Order is recorded by the flags' own Set
// methods.
type targetFlags struct {
	engine.TargetChoice
	fs *flag.FlagSet // where they were registered: which were set
}

// variantKeys says what a --variant's KEY=VALUE pairs set, as
// engine.ParseVariant reads them.
const variantKeys = "each KEY=VALUE a sysctl set during its trials, dir=PATH a directory standing in for " +
	"the scenario file's (a checkout of the same tree), or env.NAME=VALUE a variable added to the exec workload's environment"

func (f *targetFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.Func("kernel", "run in a VM booting `SPEC`: a bzImage path, debian:ABI or debian:{6.1,6.12,latest}-{cloud,rt,generic}, then its command line; NAME=SPEC names the VM (repeatable)", f.use("kernel"))
	fs.Func("target", "run on target `NAME` from the targets file (repeatable)", f.use("target"))
	fs.StringVar(&f.File, "targets", "", "targets `FILE` (default: the built-in vm/targets.yaml)")
	fs.BoolFunc("vm", "run in a VM booting the default kernel ("+kernels.DefaultSpec+")", f.use("vm"))
	fs.StringVar(&f.Cmdline, "cmdline", "", "extra guest kernel command line for --kernel/--vm")
	fs.IntVar(&f.VCPUs, "vcpus", 0, "guest vCPUs for --kernel/--vm (default 2 in real time, 1 in virtual time)")
	fs.IntVar(&f.MemMiB, "memory", 1024, "guest memory in `MiB` for --kernel/--vm")
	fs.StringVar(&f.Accel, "accel", "auto", "QEMU accelerator: auto (kvm when /dev/kvm works, else tcg), kvm or tcg")
	fs.IntVar(&f.Jobs, "jobs", 0, "VMs in virtual time that boot at once: a run's trials, a round's targets (default: the CPUs; real-time VMs boot one at a time)")
	fs.StringVar(&f.Clock, "clock", vm.ClockAuto, "the VMs' clock: virtual (QEMU counts instructions, 1 ns each: deterministic, TCG only), real, or auto (virtual under TCG, real under KVM)")
	fs.IntVar(&f.Phases, "phases", 0, "in virtual time, trials per layout seed: a layout boots once, its state saved once its tracers are attached, and each of its `N` trials resumes from there with a start phase of its own (0: a boot per trial)")
	fs.DurationVar(&f.Deadline, "deadline", 0, "kill a VM that has not answered by then (default: from the scenarios' durations)")
	fs.StringVar(&f.Cache, "kernel-cache", "", "kernel cache `DIR` (default: the user cache dir)")
}

// registerVariant adds --variant to fs, recorded in the targets' order.
func (f *targetFlags) registerVariant(fs *flag.FlagSet, usage string) {
	fs.Func("variant", usage, f.use("variant"))
}

// use records a target flag's value of kind (engine.TargetChoice.Use).
func (f *targetFlags) use(kind string) func(string) error {
	return func(s string) error { return f.Use(kind, s) }
}

// check refuses VM flags that could only fail later, in QEMU or the
// guest, or that no target would use (engine.TargetChoice.CheckSet);
// each: every target must use them, as in a matrix.
func (f *targetFlags) check(each bool) error {
	// 0 is the default, the clock's own count; given, it is no count.
	if f.VCPUs < 1 && len(cmdline.Given(f.fs, "vcpus")) > 0 {
		return engine.Inputf("--vcpus %d: want 1 to %d", f.VCPUs, vm.MaxVCPUs)
	}
	if f.MemMiB < 1 && len(cmdline.Given(f.fs, "memory")) > 0 {
		return engine.Inputf("--memory %d: want %d to %d MiB (a guest needs at least %d MiB to boot)", f.MemMiB, vm.MinMemMiB, vm.MaxMemMiB, vm.MinMemMiB)
	}
	if err := f.Check(); err != nil {
		return err
	}
	return f.CheckSet(cmdline.Given(f.fs, engine.Settings...), each)
}

// resolve resolves the flags (engine.TargetChoice.Resolve); none means
// the host alone.
func (f *targetFlags) resolve() ([]engine.Target, error) {
	if err := f.check(false); err != nil {
		return nil, err
	}
	f.HostRunner = runScenarios
	return f.Resolve()
}

// roundsEnv is what a matrix or a same-job gate touches outside itself;
// tests replace it.
type roundsEnv struct {
	// wrap, when set, stands in for each target of a host or a VM (inside
	// a variant's sysctls).
	wrap func(engine.Target) engine.Target
	// sysctlRoot is /proc/sys.
	sysctlRoot string
	// orderSeed, when non-zero, seeds a same-job gate's random order
	// within rounds (tests); otherwise the system's random source does.
	orderSeed uint64
}

// inOrder builds the targets of a matrix or a same-job gate in the order
// their flags were given (the first is the reference, or the base), and
// describes each. The VM settings must serve every target: --target takes
// its from the targets file.
func (f *targetFlags) inOrder(env roundsEnv) ([]engine.Target, []string, error) {
	if err := f.check(true); err != nil {
		return nil, nil, err
	}
	f.HostRunner = runScenarios
	return f.InOrder(env.sysctlRoot, env.wrap)
}

// reportFlags are how a comparison is made and written: thresholds,
// resamples, outputs, strictness.
type reportFlags struct {
	engine.ReportOutputs
	thresholds []stats.Threshold
	force      bool
	resamples  int
}

func (f *reportFlags) register(fs *flag.FlagSet) {
	f.registerThresholds(fs)
	fs.Func("format", "report `FORMAT[=FILE]`: "+render.FormatNames()+", to stdout (no FILE, or -) or FILE (repeatable; default text)", cmdline.Append(&f.Outputs, render.ParseOutput))
	fs.StringVar(&f.Output, "output", "", "write the report to `FILE` instead of stdout (for a single --format without =FILE); - is stdout")
	fs.BoolVar(&f.Strict, "strict", false, "fail (exit 1) on inconclusive verdicts too")
	fs.BoolVar(&f.force, "force", false, "compare scenarios whose parameters differ")
	fs.StringVar(&f.Pprof, "pprof", "", "write each side's stacks sampled in its slowest requests as pprof profiles under `DIR` (DIR/SCENARIO.METRIC/base.pb.gz, head.pb.gz)")
}

// registerThresholds registers the flags that shape the statistics alone.
func (f *reportFlags) registerThresholds(fs *flag.FlagSet) {
	fs.Func("threshold", "override a threshold: `[METRIC:]PCTL=T%`, e.g. p99=8% or syscall.read:p99=5% or p90=off (repeatable)", cmdline.Append(&f.thresholds, stats.ParseThreshold))
	f.resamples = stats.DefaultResamples
	fs.Func("resamples", fmt.Sprintf("bootstrap resamples per confidence interval, 1 to %d (default %d)", stats.MaxResamples, stats.DefaultResamples), func(s string) (err error) {
		f.resamples, err = engine.ParseResamples(s)
		return err
	})
}

// resolveOutputs checks every output before anything runs
// (engine.ReportOutputs.Resolve).
func (f *reportFlags) resolveOutputs(verbose bool) ([]render.Output, error) {
	f.Verbose = verbose
	return f.Resolve()
}

// lookup resolves the scenarios names (engine.LookupScenarios) and checks the
// thresholds against their metrics.
func (f *reportFlags) lookup(names []string) ([]*scenarios.Scenario, error) {
	ss, err := engine.LookupScenarios(names)
	if err != nil {
		return nil, err
	}
	return ss, engine.CheckThresholds(f.thresholds, scenarios.AllMetrics(ss))
}

func (f *reportFlags) options() report.Options {
	return report.Options{Resamples: f.resamples, Thresholds: f.thresholds, Force: f.force}
}

// verdict writes m to outs and turns it into the command's outcome
// (engine.Verdict).
func (f *reportFlags) verdict(m *report.Matrix, outs []render.Output, name string, stdout, stderr io.Writer) error {
	if err := engine.WriteProfiles(f.Pprof, m, stderr); err != nil {
		return err
	}
	return engine.Verdict(m, outs, f.Strict, name, stdout, stderr)
}

// historyLine is gate's and compare's --history: under the verdicts, a
// line per gated percentile with the candidate against the branch's last
// commits in a history store (engine.AddTrends).
type historyLine struct {
	store string
	opt   engine.TrendOptions
}

func (h *historyLine) register(fs *flag.FlagSet) {
	fs.StringVar(&h.store, "history", "", "history `STORE` (git:REPO[#BRANCH] or a directory): show each gated percentile against --history-ref's last commits in it")
	fs.StringVar(&h.opt.Ref, "history-ref", engine.DefaultTrendRef, "with --history: the `BRANCH` whose commits to show")
	h.opt.N = engine.DefaultTrendCommits
	fs.Func("history-n", fmt.Sprintf("with --history: how many of its last commits (`N`, default %d)", engine.DefaultTrendCommits), func(s string) (err error) {
		h.opt.N, err = engine.ParseTrendCommits(s)
		return err
	})
}
