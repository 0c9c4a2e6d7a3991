package main

import (
	"context"
	"flag"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
)

func baselineSubs() []cmdline.Sub {
	return []cmdline.Sub{
		{Name: "show", Synopsis: "PATH [--format text|json]", Run: baselineShow,
			About: subAbout("Lists the baselines in a directory (or one Result file): scenario, target, kernel, trials and p99 per metric; json is docs/baselines.schema.json.",
				exits{"0 listed", exitBadInput + " (a baseline that does not read)"},
				"tailgate baseline show baselines/", "tailgate baseline show baselines/ --format json")},
		{Name: "save", Synopsis: "RESULT DIR [--replace-unreadable]", Run: baselineSave,
			About: subAbout("Stores each scenario of RESULT as its own baseline file in DIR, where 'tailgate gate --baseline DIR' finds it.",
				exits{"0 stored", exitBadInput + " (a Result or stored baseline that does not read)", "3 a file not written"},
				"tailgate baseline save read.json baselines/")},
	}
}

// baselineAbout is what baseline's own help says after its synopses.
var baselineAbout = "\nshow lists stored baselines; save stores a Result's scenarios as baselines.\n\n" +
	helpEnd(exits{"0 done", exitBadInput + " (a Result or baseline that does not read)", "3 a file not written"},
		"tailgate baseline save read.json baselines/",
		"tailgate baseline show baselines/")

func cmdBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cmdline.Subcommands{Command: "baseline", Subs: baselineSubs(), About: baselineAbout}.Dispatch(ctx, args, stdout, stderr)
}

func baselineShow(_ context.Context, fs *flag.FlagSet, args []string, stdout, _ io.Writer) error {
	format := fs.String("format", "text", "text or json")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format %q: want text or json", *format)
	}
	if len(pos) != 1 {
		return usagef("want one PATH, got %d", len(pos))
	}
	return engine.ShowBaselines(pos[0], *format == "json", stdout, termwidth.Of(stdout))
}

func baselineSave(ctx context.Context, fs *flag.FlagSet, args []string, _, stderr io.Writer) error {
	var opt baseline.SaveOptions
	fs.BoolVar(&opt.ReplaceUnreadable, "replace-unreadable", false, "replace stored baselines that cannot be read")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want RESULT and DIR, got %d arguments", len(pos))
	}
	r, err := engine.LoadResult(pos[0], "result")
	if err != nil {
		return err
	}
	return engine.SaveBaselines(ctx, pos[1], r, opt, stderr)
}
