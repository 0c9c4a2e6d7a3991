package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// reportFlags are the flags compare and gate share: thresholds, outputs,
// strictness.
type reportFlags struct {
	thresholds []report.Threshold
	outputs    []report.Output
	output     string
	strict     bool
	force      bool
	resamples  int
}

func (f *reportFlags) register(fs *flag.FlagSet) {
	f.registerThresholds(fs)
	fs.Func("format", "report `FORMAT[=FILE]`: text, markdown, json, junit, github or html, to stdout (no FILE, or -) or FILE (repeatable; default text)", func(s string) error {
		o, err := report.ParseOutput(s)
		f.outputs = append(f.outputs, o)
		return err
	})
	fs.StringVar(&f.output, "output", "", "write the report to `FILE` instead of stdout (for a single --format without =FILE); - is stdout")
	fs.BoolVar(&f.strict, "strict", false, "fail (exit 1) on inconclusive verdicts too")
	fs.BoolVar(&f.force, "force", false, "compare scenarios whose parameters differ")
}

// registerThresholds registers the flags that shape the statistics alone.
func (f *reportFlags) registerThresholds(fs *flag.FlagSet) {
	fs.Func("threshold", "override a threshold: `[METRIC:]PCTL=T%`, e.g. p99=8% or syscall.read:p99=5% or p90=off (repeatable)", func(s string) error {
		t, err := report.ParseThreshold(s)
		if err != nil {
			return err
		}
		f.thresholds = append(f.thresholds, t)
		return nil
	})
	f.resamples = report.DefaultResamples
	fs.Func("resamples", fmt.Sprintf("bootstrap resamples per confidence interval, 1 to %d (default %d)", report.MaxResamples, report.DefaultResamples), func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > report.MaxResamples {
			return fmt.Errorf("want a number from 1 to %d", report.MaxResamples)
		}
		f.resamples = n
		return nil
	})
}

// resolveOutputs applies --output and the default, and checks every
// file before anything runs (report.ResolveOutputs).
func (f *reportFlags) resolveOutputs() ([]report.Output, error) {
	outs, err := report.ResolveOutputs(f.outputs, f.output, f.strict)
	if err != nil {
		return nil, &usageError{Err: err}
	}
	return outs, nil
}

// checkThresholds refuses a --threshold for a metric none of metrics is
// (report.CheckThresholdMetrics): a usage error.
func (f *reportFlags) checkThresholds(metrics []string) error {
	if err := report.CheckThresholdMetrics(f.thresholds, metrics); err != nil {
		return &usageError{Err: err}
	}
	return nil
}

// lookup resolves the scenarios names (lookupScenarios) and checks the
// thresholds against their metrics.
func (f *reportFlags) lookup(names []string) ([]*scenarios.Scenario, error) {
	ss, err := lookupScenarios(names)
	if err != nil {
		return nil, err
	}
	return ss, f.checkThresholds(scenarios.AllMetrics(ss))
}

func (f *reportFlags) options() report.Options {
	return report.Options{Resamples: f.resamples, Thresholds: f.thresholds, Force: f.force}
}

// writeJUnitErrors writes, when err is an infrastructure failure (exit 3),
// the JUnit document that says so to every JUnit output file.
func writeJUnitErrors(outs []report.Output, command string, err error, stderr io.Writer) {
	if err != nil && exitCode(err) == exitInfra {
		report.WriteJUnitErrors(outs, command, err, stderr)
	}
}

// verdict writes m to outs and turns it into the command's outcome:
// errRegression (exit 1) when the gate fails, after saying why on stderr
// when the report might not be on a terminal.
func (f *reportFlags) verdict(m *report.Matrix, outs []report.Output, name string, stdout, stderr io.Writer) error {
	if err := report.WriteOutputs(m, outs, stdout, stderr); err != nil {
		return err
	}
	if !m.Failed(f.strict) {
		return nil
	}
	for _, line := range m.Failures(f.strict) {
		fmt.Fprintf(stderr, "tailgate %s: %s\n", name, line)
	}
	return errRegression
}

// loadInput reads a Result named on the command line; an unreadable one is
// bad input (exit 2).
func loadInput(path, what string) (*result.Result, error) {
	r, err := result.Load(path)
	if err != nil {
		return nil, &usageError{Err: fmt.Errorf("%s: %w", what, err)}
	}
	return r, nil
}

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("compare")
	var f reportFlags
	f.register(fs)
	var h historyLine
	h.register(fs)
	cmdline.SetUsage(fs, stdout, "usage: tailgate compare BASE NEW [--threshold [METRIC:]PCTL=T%]... [--format FORMAT[=FILE]]... [--output FILE] [--strict] [--force]\n\n"+
		"BASE is a Result file or a baseline directory; NEW is a Result file.\n"+
		"exit 0 pass, 1 regression (or inconclusive with --strict), 2 bad usage or input\n\n")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want BASE and NEW, got %d arguments; see tailgate compare -h", len(pos))
	}
	outs, err := f.resolveOutputs()
	if err != nil {
		return err
	}
	cand, err := loadInput(pos[1], "candidate")
	if err != nil {
		return err
	}
	base, err := engine.LoadBase(pos[0], cand, pos[1], stderr)
	if err != nil {
		return err
	}
	if err := f.checkThresholds(result.MetricNames(base, cand)); err != nil {
		return err
	}
	// The bootstrap does not look at ctx: an interrupt ends the wait.
	rep, err := engine.Interruptibly(ctx, func() (*report.Report, error) { return report.Compare(base, cand, f.options()) })
	if errors.Is(err, context.Canceled) {
		return infra(errors.New("interrupted; nothing compared"))
	}
	if err != nil {
		return engine.CompareError(err)
	}
	m := rep.Matrix()
	h.attach(ctx, m, stderr)
	return f.verdict(m, outs, "compare", stdout, stderr)
}
