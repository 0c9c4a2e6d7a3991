package main

import (
	"context"
	"errors"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("compare")
	var fl commandFlags
	fl.report.register(fs)
	fl.history.register(fs)
	fs.BoolVar(&fl.run.verbose, "v", false, "a text report of every row and warning, gated or not (default: the gated ones, and how many more -v shows)")
	cmdline.SetUsage(fs, stdout, "usage: tailgate compare BASE NEW [--threshold [METRIC:]PCTL=T%]... [--format FORMAT[=FILE]]... [--output FILE] [--strict] [--force] [-v]\n\n"+
		"BASE is a Result file or a baseline directory; NEW is a Result file.\n\n"+
		helpEnd(exits{"0 pass", "1 regression (or inconclusive with --strict)", exitBadInput,
			exitInfraAny + " (a report not written, an interrupt)"},
			"tailgate compare base.json head.json",
			"tailgate compare baselines/ head.json --threshold p99=5%",
			"tailgate compare base.json head.json --format markdown=report.md"))
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want BASE and NEW, got %d arguments; see tailgate compare -h", len(pos))
	}
	outs, err := fl.report.resolveOutputs(fl.run.verbose)
	if err != nil {
		return err
	}
	cand, err := engine.LoadResult(pos[1], "candidate")
	if err != nil {
		return err
	}
	base, err := engine.LoadBase(pos[0], cand, pos[1], stderr)
	if err != nil {
		return err
	}
	if err := engine.CheckThresholds(fl.report.thresholds, result.MetricNames(base, cand)); err != nil {
		return err
	}
	// The bootstrap does not look at ctx: an interrupt ends the wait.
	rep, err := engine.Interruptibly(ctx, func() (*report.Report, error) { return report.Compare(base, cand, fl.report.options()) })
	if errors.Is(err, context.Canceled) {
		return infra(errors.New("interrupted; nothing compared"))
	}
	if err != nil {
		return engine.CompareError(err)
	}
	m := rep.Matrix()
	engine.AttachTrends(ctx, m, fl.history.store, fl.history.opt, stderr)
	return fl.report.verdict(m, outs, "compare", stdout, stderr)
}
