package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/sched"
	"github.com/tailgate-ci/tailgate/bpf/syscalls"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/runner"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// runFlags are the flags run, gate and calibrate share.
type runFlags struct {
	trials   int
	duration time.Duration
	warmup   time.Duration
	output   string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.trials, "trials", 0, "trials per scenario (default: the scenario's)")
	fs.DurationVar(&f.duration, "duration", 0, "duration of each trial (default: the scenario's)")
	fs.DurationVar(&f.warmup, "warmup", -1, "warmup before the trials (default: the scenario's)")
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tailgate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("tailgate run syscall-read --trials 3").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// lookupScenarios resolves names or paths; none means every built-in.
func lookupScenarios(names []string) ([]*scenarios.Scenario, error) {
	if len(names) == 0 {
		return scenarios.Builtin(), nil
	}
	var out []*scenarios.Scenario
	for _, n := range names {
		s, err := scenarios.Lookup(n)
		if err != nil {
			return nil, &usageError{err}
		}
		out = append(out, s)
	}
	return out, nil
}

// runRequest builds a runner request with progress on stderr.
func (f *runFlags) request(ss []*scenarios.Scenario, p *progress.Reporter) (runner.Request, error) {
	if f.trials < 0 {
		return runner.Request{}, usagef("--trials must be positive, got %d", f.trials)
	}
	if f.duration < 0 {
		return runner.Request{}, usagef("--duration must be positive, got %s", f.duration)
	}
	req := runner.Request{
		Scenarios: ss,
		Trials:    f.trials,
		Duration:  f.duration,
		Warmup:    f.warmup,
		WarmupSet: f.warmup >= 0,
	}
	total := 0
	for _, s := range ss {
		total += req.Resolve(s).Trials
	}
	done := 0
	req.Progress = func(e runner.Event) {
		label := fmt.Sprintf("%s (%d/%d)", e.Scenario, e.Index, e.Count)
		switch e.Phase {
		case "attach":
			p.Step(done, total, label+": attaching tracers", "")
		case "warmup":
			p.Step(done, total, label+": warmup", "")
		case "trial":
			if e.Detail == "" {
				p.Step(done, total, fmt.Sprintf("%s: trial %d/%d", label, e.Trial, e.Trials), "")
				return
			}
			done++
			p.Step(done, total, fmt.Sprintf("%s: trial %d/%d done", label, e.Trial, e.Trials), e.Detail)
		}
	}
	return req, nil
}

// classify turns a runner error into the exit code it deserves.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var u *usageError
	if errors.As(err, &u) {
		return err
	}
	return infra(err)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	var f runFlags
	f.register(fs)
	fs.StringVar(&f.output, "o", "", "write the Result JSON to `FILE`")
	shardFlag := fs.String("shard", "", "run only shard `i/n` of the scenarios (for a CI matrix; merge the Results with tailgate merge)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: tailgate run [SCENARIO...] [--trials N] [--duration D] [--warmup D] [--shard i/n] [-o FILE]\n\nSCENARIO is a built-in name (see 'tailgate list') or a YAML file; none runs every built-in.\n\n")
		fs.PrintDefaults()
	}
	names, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if *shardFlag != "" {
		sh, err := shard.Parse(*shardFlag)
		if err != nil {
			return &usageError{err}
		}
		keys := make([]string, len(ss))
		for i, s := range ss {
			keys[i] = s.Name + "@host"
		}
		var mine []*scenarios.Scenario
		for _, i := range sh.Select(keys) {
			mine = append(mine, ss[i])
		}
		if len(mine) == 0 {
			fmt.Fprintf(stderr, "shard %s has no work (%d scenarios over %d shards)\n", sh, len(ss), sh.N)
		}
		ss = mine
	}
	p := progress.New(stderr)
	req, err := f.request(ss, p)
	if err != nil {
		return err
	}
	res, runErr := runner.Run(ctx, req)
	p.Done()
	if res != nil && len(res.Scenarios) > 0 {
		if err := report.RenderRun(stdout, res); err != nil {
			return err
		}
	}
	// What was measured is kept even when the run was cut short.
	if f.output != "" && res != nil && (runErr == nil || len(res.Scenarios) > 0) {
		// An empty shard writes an empty Result too, so a merge step finds
		// every file it expects.
		if err := result.Write(f.output, res); err != nil {
			return infra(fmt.Errorf("write result: %w", err))
		}
		if runErr != nil {
			fmt.Fprintf(stderr, "tailgate run: partial result written to %s\n", f.output)
		} else {
			fmt.Fprintf(stderr, "result written to %s\n", f.output)
		}
	}
	if errors.Is(runErr, context.Canceled) {
		return infra(errors.New("interrupted; tracers detached"))
	}
	return classify(runErr)
}

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	if _, err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	fmt.Fprintln(stdout, "Scenarios (built in; run with 'tailgate run NAME'):")
	t := report.NewTable(stdout)
	t.Header([]string{"scenario", "workload", "tracers", "metrics", "description"})
	for _, s := range scenarios.Builtin() {
		var tr []string
		if s.Tracers.Syscall != nil {
			tr = append(tr, "syscall")
		}
		if s.Tracers.Sched != nil {
			tr = append(tr, "sched")
		}
		if err := t.Append([]string{s.Name, s.Workload.Kind, strings.Join(tr, ","),
			strings.Join(scenarios.Metrics(s), ", "), s.Description}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nTracers:")
	t = report.NewTable(stdout)
	t.Header([]string{"tracer", "metrics", "what"})
	rows := [][]string{
		{"syscall", "syscall.<name>", "sys_enter to sys_exit of the listed syscalls; names: " + strings.Join(syscalls.Names(), " ")},
		{"sched", strings.Join(sched.Metrics, ", "), "wakeup / new task / preemption to switch-in"},
		{"(timer workload)", "timer.lateness", "user-space lateness of clock_nanosleep wakeups"},
	}
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}
