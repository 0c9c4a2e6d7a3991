package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

// reportFlags are the flags compare and gate share: thresholds, outputs,
// strictness.
type reportFlags struct {
	thresholds []report.Threshold
	outputs    []reportOutput
	output     string
	strict     bool
	force      bool
	resamples  int
}

// reportOutput is one rendering and where it goes ("" is stdout).
type reportOutput struct {
	format report.Format
	path   string
	strict bool // --strict: a JUnit report fails inconclusive verdicts, as the exit code does
}

func (f *reportFlags) register(fs *flag.FlagSet) {
	f.registerThresholds(fs)
	fs.Func("format", "report `FORMAT[=FILE]`: text, markdown, json, junit, github or html, to stdout (no FILE, or -) or FILE (repeatable; default text)", func(s string) error {
		name, path, _ := strings.Cut(s, "=")
		format, err := report.ParseFormat(name)
		if err != nil {
			return err
		}
		if path == "" && strings.Contains(s, "=") {
			return fmt.Errorf("%q: empty file name after '='; write FORMAT=- for standard output", s)
		}
		if path == stdoutPath {
			path = ""
		}
		f.outputs = append(f.outputs, reportOutput{format: format, path: path})
		return nil
	})
	fs.StringVar(&f.output, "output", "", "write the report to `FILE` instead of stdout (for a single --format without =FILE); - is stdout")
	fs.BoolVar(&f.strict, "strict", false, "fail (exit 1) on inconclusive verdicts too")
	fs.BoolVar(&f.force, "force", false, "compare scenarios whose parameters differ")
}

// registerThresholds registers the flags that shape the statistics alone.
func (f *reportFlags) registerThresholds(fs *flag.FlagSet) {
	fs.Func("threshold", "override a threshold: `[METRIC:]PCTL=T%`, e.g. p99=8% or syscall.read:p99=5% or p90=off (repeatable)", func(s string) error {
		if _, v, ok := strings.Cut(s, "="); ok {
			num, _ := strings.CutSuffix(strings.TrimSpace(v), "%")
			if x, err := strconv.ParseFloat(strings.TrimSpace(num), 64); err == nil && (math.IsInf(x, 0) || math.IsNaN(x)) {
				return fmt.Errorf("threshold %q: want a finite value such as 10%% (or off)", s)
			}
		}
		t, err := report.ParseThreshold(s)
		if err != nil {
			return err
		}
		f.thresholds = append(f.thresholds, t)
		return nil
	})
	fs.IntVar(&f.resamples, "resamples", report.DefaultResamples, "bootstrap resamples per confidence interval")
}

// resolveOutputs applies --output and the default, and checks that at most
// one rendering goes to stdout.
func (f *reportFlags) resolveOutputs() ([]reportOutput, error) {
	outs := append([]reportOutput(nil), f.outputs...)
	if len(outs) == 0 {
		outs = []reportOutput{{format: report.Text}}
	}
	var toStdout []int
	for i, o := range outs {
		if o.path == "" {
			toStdout = append(toStdout, i)
		}
	}
	if f.output != "" && f.output != stdoutPath {
		if len(toStdout) != 1 {
			return nil, usagef("--output names one file but %d formats have none; write --format FORMAT=FILE for each", len(toStdout))
		}
		outs[toStdout[0]].path = f.output
		toStdout = nil
	}
	if len(toStdout) > 1 {
		return nil, usagef("%d formats would go to stdout; give all but one a file: --format FORMAT=FILE", len(toStdout))
	}
	// Every file is checked now, before a run spends minutes: a missing
	// directory found after it would lose the measurement.
	written := map[string]reportOutput{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := checkOutputPath(o.path); err != nil {
			return nil, err
		}
		key, ok := outputKey(o.path)
		if !ok {
			continue
		}
		if prev, dup := written[key]; dup {
			return nil, usagef("the %s and %s reports would both be written to %s; give each its own file", prev.format, o.format, o.path)
		}
		written[key] = o
	}
	if f.resamples < 1 {
		return nil, usagef("--resamples must be at least 1, got %d", f.resamples)
	}
	for i := range outs {
		outs[i].strict = f.strict
	}
	return outs, nil
}

func (f *reportFlags) options() report.Options {
	return report.Options{Resamples: f.resamples, Thresholds: f.thresholds, Force: f.force}
}

// writeReports renders m, a comparison's (Report.Matrix) or a matrix's,
// to every output.
func writeReports(m *report.Matrix, outs []reportOutput, stdout, stderr io.Writer) error {
	return writeOutputs(outs, func(w io.Writer, o reportOutput) error {
		if o.format == report.JUnit {
			return report.WriteJUnit(w, m, report.JUnitOptions{Strict: o.strict})
		}
		return report.WriteMatrix(w, m, o.format)
	}, stdout, stderr)
}

// writeOutputs renders each output's format with render; files are written
// atomically so that CI never picks up half a report.
func writeOutputs(outs []reportOutput, render func(io.Writer, reportOutput) error, stdout, stderr io.Writer) error {
	for _, o := range outs {
		var b bytes.Buffer
		if err := render(&b, o); err != nil {
			return err
		}
		if o.path == "" {
			if _, err := stdout.Write(b.Bytes()); err != nil {
				return err
			}
			continue
		}
		if err := result.WriteFileAtomic(o.path, b.Bytes()); err != nil {
			return infra(fmt.Errorf("write %s report: %w", o.format, err))
		}
		fmt.Fprintf(stderr, "%s report written to %s\n", o.format, o.path)
	}
	return nil
}

// writeJUnitErrors writes, when err is an infrastructure failure (exit 3),
// the JUnit document that says so to every JUnit output file: CI that
// reads the XML sees the job broken, not a missing file or a pass.
func writeJUnitErrors(outs []reportOutput, command string, err error, stderr io.Writer) {
	if err == nil || exitCode(err) != exitInfra {
		return
	}
	for _, o := range outs {
		if o.format != report.JUnit || o.path == "" {
			continue
		}
		var b bytes.Buffer
		if report.WriteJUnitError(&b, command, err) != nil || result.WriteFileAtomic(o.path, b.Bytes()) != nil {
			continue
		}
		fmt.Fprintf(stderr, "junit report of the failure written to %s\n", o.path)
	}
}

// verdictError turns a comparison or a matrix into the command's outcome:
// errRegression (exit 1) when the gate fails, after saying why on stderr
// when the report might not be on a terminal.
func verdictError(m *report.Matrix, strict bool, name string, stderr io.Writer) error {
	if !m.Failed(strict) {
		return nil
	}
	if c := m.Tally(); c.Regressions > 0 {
		for _, h := range m.Headlines() {
			fmt.Fprintf(stderr, "tailgate %s: %s\n", name, h)
		}
	} else {
		fmt.Fprintf(stderr, "tailgate %s: %d inconclusive %s fail --strict\n", name, c.Inconclusive, pluralS(c.Inconclusive, "verdict", "verdicts"))
	}
	return errRegression
}

func pluralS(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare")
	var f reportFlags
	f.register(fs)
	setUsage(fs, stdout, "usage: tailgate compare BASE NEW [--threshold [METRIC:]PCTL=T%]... [--format FORMAT[=FILE]]... [--output FILE] [--strict] [--force]\n\n"+
		"BASE is a Result file or a baseline directory; NEW is a Result file.\n"+
		"exit 0 pass, 1 regression (or inconclusive with --strict), 2 bad usage or input\n\n")
	pos, err := parseFlags(fs, args)
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
	var base *result.Result
	if isDir(pos[0]) {
		var missing []string
		base, missing, err = engine.Store{Path: pos[0]}.For(cand)
		if err != nil {
			return err
		}
		for _, m := range missing {
			fmt.Fprintf(stderr, "tailgate compare: no baseline for scenario %s on %s in %s; not compared\n", m, cand.Target.Name, pos[0])
		}
		if base == nil {
			return usagef("no baseline in %s for any scenario of %s", pos[0], pos[1])
		}
	} else if base, err = loadInput(pos[0], "baseline"); err != nil {
		return err
	} else if err := baseline.Check(base); err != nil {
		// Nothing to compare with would pass every gate.
		return usagef("baseline %s: %w", pos[0], err)
	}
	if err := checkThresholdMetrics(f.thresholds, resultMetrics(base, cand)); err != nil {
		return err
	}
	rep, err := report.Compare(base, cand, f.options())
	if err != nil {
		return engine.CompareError(err)
	}
	m := rep.Matrix()
	if err := writeReports(m, outs, stdout, stderr); err != nil {
		return err
	}
	return verdictError(m, f.strict, "compare", stderr)
}
