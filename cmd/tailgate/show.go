package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/report/show"
)

// showUsage lists the formats as report/show describes them (show.About),
// each sentence wrapped beside its name.
func showUsage() string {
	var b strings.Builder
	b.WriteString(`usage: tailgate show RESULT [--format FORMAT] [--linear MIN:MAX:STEP]

Shows a Result: per scenario and metric, all trials merged as a
power-of-two histogram (rows [lo, hi) in ns, as bcc's print_log2_hist
draws them), the percentiles, and each trial's.

`)
	for _, f := range show.Formats {
		about := strings.ReplaceAll(cmdline.Wrap(show.About[f], 58), "\n", "\n"+strings.Repeat(" ", 16))
		if len(f) > 12 {
			fmt.Fprintf(&b, "  %s\n%16s%s\n", f, "", about)
		} else {
			fmt.Fprintf(&b, "  %-14s%s\n", f, about)
		}
	}
	b.WriteString(`
--linear MIN:MAX:STEP draws fixed-width rows instead (text only), e.g.
--linear 0:20us:1us, with a row each for what falls below and above.

`)
	b.WriteString(helpEnd(exits{"0 shown", exitBadInput + " (a Result that does not read)", "3 the output not written"},
		"tailgate show read.json",
		"tailgate show read.json --format csv",
		"tailgate show read.json --linear 0:20us:1us"))
	return b.String()
}

func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("show")
	format := fs.String("format", string(show.FormatText), "output `FORMAT`: "+strings.Join(show.FormatNames(), ", "))
	linear := fs.String("linear", "", "fixed-width rows `MIN:MAX:STEP` (durations, e.g. 0:20us:1us) instead of powers of two; text only")
	cmdline.SetUsage(fs, stdout, showUsage())
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
	res, err := engine.LoadResult(pos[0], "result")
	if err != nil {
		return err
	}
	if err := show.New(res).Write(stdout, f, o); err != nil {
		return infra(err)
	}
	return nil
}
