package main

import (
	"context"
	"io"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/report/show"
)

const showUsage = `usage: tailgate show RESULT [--format FORMAT] [--linear MIN:MAX:STEP]

Shows a Result: per scenario and metric, all trials merged as a
power-of-two histogram (rows [lo, hi) in ns, as bcc's print_log2_hist
draws them), the percentiles, and each trial's.

  text          the histograms, percentiles and trials (default)
  json          the same as one JSON document (docs/show.schema.json)
  csv           a row per target, scenario, metric and trial: its
                percentiles in ns, empty for a trial without events
  openmetrics   the histogram, in buckets that are the same in every run
                (4 per power of two, 64ns to 68.7s), and a summary of the
                percentiles, in seconds, for Prometheus: sum by (le) adds
                runs and hosts up for histogram_quantile
  benchstat     Go benchmark lines, one per metric, percentile and trial
                (BenchmarkSyscallRead/syscall.read/p99 1 164 ns/op): each
                trial is a sample for benchstat, which takes the median of
                the trials and compares runs by a Mann-Whitney U test per
                percentile; the gate reads the trials merged and holds the
                false alarms over all gated tests, so the two may disagree
  github-action-benchmark
                JSON for github-action-benchmark's customSmallerIsBetter
                tool: one value per scenario, metric and percentile (ns),
                the trials merged, range ± half its 95% interval
  bencher       Bencher Metric Format JSON: the same values in the latency
                measure, the interval as lower_value and upper_value

--linear MIN:MAX:STEP draws fixed-width rows instead (text only), e.g.
--linear 0:20us:1us, with a row each for what falls below and above.

`

func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("show")
	format := fs.String("format", string(show.FormatText), "output `FORMAT`: text, json, csv, openmetrics, benchstat, github-action-benchmark or bencher")
	linear := fs.String("linear", "", "fixed-width rows `MIN:MAX:STEP` (durations, e.g. 0:20us:1us) instead of powers of two; text only")
	cmdline.SetUsage(fs, stdout, showUsage)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one Result file (got %d arguments)", len(pos))
	}
	f, err := show.ParseFormat(*format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	var o show.Options
	if *linear != "" {
		if f != show.FormatText {
			return usagef("--linear draws text rows; --format %s would ignore it", f)
		}
		l, err := show.ParseLinear(*linear)
		if err != nil {
			return usagef("--linear %s: %v", *linear, err)
		}
		o.Linear = &l
	}
	res, err := loadInput(pos[0], "result")
	if err != nil {
		return err
	}
	if err := show.New(res).Write(stdout, f, o); err != nil {
		return infra(err)
	}
	return nil
}
