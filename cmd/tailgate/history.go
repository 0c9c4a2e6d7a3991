package main

import (
	"context"
	"flag"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/render"
)

// historySubs are history's subcommands, in the order its usage lists
// them.
func historySubs() []cmdline.Sub {
	return []cmdline.Sub{
		{Name: "add", Synopsis: "STORE RESULT --commit SHA [--time T] [--ref REF] [--replace]", Run: historyAdd,
			About: subAbout("Records RESULT under commit SHA in STORE.",
				exits{"0 recorded", exitBadInput + " (a Result that does not read, a commit recorded already)", historyInfra},
				`tailgate history add git:.#tailgate-history read.json --commit "$GITHUB_SHA"`,
				"tailgate history add ./history read.json \\",
				"    --commit 4d7ad6fe6c15aa5e3e1c4c0f1f2b0a9d8e7c6b5a \\",
				"    --time 2026-01-02T15:04:05Z --ref main")},
		{Name: "check", Synopsis: "STORE", Run: historyCheck,
			About: subAbout("Reads every record of STORE and checks it against the index: its digest, its format, its Result.",
				exits{"0 every record whole", exitBadInput + " (a damaged record)", historyInfra},
				"tailgate history check git:.#tailgate-history")},
		{Name: "prune", Synopsis: "STORE --keep N | --older-than D", Run: historyPrune,
			About: subAbout("Removes the records of old commits, and files the index does not list.",
				exits{"0 pruned", exitBadInput, historyInfra},
				"tailgate history prune git:.#tailgate-history --keep 500",
				"tailgate history prune ./history --older-than 90d")},
		{Name: "changes", Synopsis: "STORE [--metric M] [--percentile P] [--format text|json|markdown] [--level A]", Run: historyChanges,
			About: subAbout("Lists the change points of STORE's series: commit, time, metric, percentile, before and after with intervals, significance.",
				exits{"0 listed (change points or none)", exitBadInput + " (an empty or damaged store)", historyInfra},
				"tailgate history changes git:.#tailgate-history",
				"tailgate history changes ./history --metric syscall.read --percentile p99.9",
				"tailgate history changes ./history --format markdown --level 0.05")},
		{Name: "page", Alias: "html", Synopsis: "STORE -o DIR [--commit-url URL] [--record-url URL] [--title TITLE]", Run: historyPage,
			About: subAbout("Writes DIR/index.html: a plot per gated percentile over commits and their dates, intervals and change points marked; self-contained. 'tailgate history html' is the same command.",
				exits{"0 written", exitBadInput + " (an empty or damaged store)", historyInfra},
				"tailgate history page git:.#tailgate-history -o site",
				"tailgate history html ./history -o site --title 'main, nightly' \\",
				"    --commit-url https://github.com/OWNER/REPO/commit/%s")},
		{Name: "confirm", Synopsis: "STORE COMMIT [--target NAME] [--build CMD] [--dry-run] [-- GATE FLAGS]", Run: historyConfirm,
			About: subAbout("Re-measures COMMIT (a change point history changes listed) and the commit before it in STORE, in one job: tailgate gate SCENARIO... --kernel P=BASE --kernel C=HEAD, base the commit before, each named after its commit. The kernels are the records' (VM targets), or what --build makes: CMD runs once per commit with TAILGATE_COMMIT set and must write the kernel image to $TAILGATE_OUT/bzImage. Flags after -- go to the gate (--budget, --format).",
				exits{"0 no regression (or an inconclusive gate, without --strict)", "1 the regression is confirmed",
					exitBadInput + " (a commit not in the store, a host record without --build)",
					exitInfraAny + " (git, a build, the gate)"},
				"tailgate history confirm git:.#tailgate-history 4d7ad6f -- --budget 5m",
				"tailgate history confirm ./history 4d7ad6f --dry-run")},
	}
}

// historyInfra is what exit 3 means to history's subcommands.
const historyInfra = exitInfraAny + " (git, a push refused, the disk)"

const historyAbout = `
Main's history: one record per commit and target (full histograms, the
environment, provenance) plus an index, in STORE: a directory, or
git:REPO[#BRANCH] (default branch tailgate-history), a branch pushed
without force and redone on the new tip when another writer got there
first. docs/history.md says which to choose.

changes finds the commits where a percentile stepped: E-divisive means
over each trial's quantile, split between commits, each change point
tested on the commits and their trials, the family of series tested held at --level
(Holm). What is gated (each record's gate policy) is tested unless
--metric or --percentile say otherwise.

page (also: history html) draws them: a self-contained HTML page.

confirm re-measures the commit before a change point and the change
point's commit in one job, as a same-job gate (tailgate gate --kernel A
--kernel B): their recorded kernels, or kernels --build makes.

` + "tailgate history SUBCOMMAND -h shows a subcommand's flags and examples.\n\n"

// historyHelp is history's own help after its synopses.
var historyHelp = historyAbout + helpEnd(exits{"0 ok (and confirm: no regression)", "1 confirm found the regression",
	exitBadInput + " (a corrupt store)", historyInfra},
	`tailgate history add git:.#tailgate-history read.json --commit "$GITHUB_SHA"`,
	"tailgate history changes git:.#tailgate-history",
	"tailgate history page git:.#tailgate-history -o site")

// confirmGate runs the gate confirm builds; tests replace it.
var confirmGate = cmdGate

func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cmdline.Subcommands{Command: "history", Subs: historySubs(), About: historyHelp}.Dispatch(ctx, args, stdout, stderr)
}

func historyAdd(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var a engine.HistoryAdd
	fs.StringVar(&a.Commit, "commit", "", "the commit `SHA` the Result measured (git rev-parse HEAD)")
	fs.StringVar(&a.Time, "time", "", "the commit's `TIME`, RFC 3339 or Unix seconds (git show -s --format=%cI); default the Result's start")
	fs.StringVar(&a.Ref, "ref", "", "the `REF` the commit was pushed to (main)")
	fs.BoolVar(&a.Replace, "replace", false, "overwrite a record of the same commit and target")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want STORE RESULT, got %s", english.Count(len(pos), "argument"))
	}
	return engine.AddHistory(ctx, pos[0], pos[1], a, stderr)
}

func historyCheck(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want STORE")
	}
	return engine.CheckHistory(ctx, pos[0], stdout)
}

func historyPrune(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	keep := fs.Int("keep", 0, "keep the newest `N` commits")
	older := fs.String("older-than", "", "remove commits older than `D` (720h, 90d)")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want STORE")
	}
	return engine.PruneHistory(ctx, pos[0], *keep, *older, stderr)
}

// registerSeries registers the flags changes and page share into q.
func registerSeries(fs *flag.FlagSet, q *engine.ChangesQuery) {
	fs.Func("metric", "test only metric `M` (repeatable, or a comma list); default what is gated", cmdline.List(&q.Metrics))
	fs.Func("percentile", "test percentile `P` (p50, p90, p99, p99.9, max; repeatable); default what is gated", cmdline.List(&q.Percentiles))
	fs.Float64Var(&q.Level, "level", changepoint.DefaultLevel, "family-wise false-alarm rate over every series tested")
}

func historyChanges(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var q engine.ChangesQuery
	registerSeries(fs, &q)
	format := fs.String("format", "text", "`FORMAT`: text, json or markdown")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want STORE")
	}
	return engine.WriteHistoryChanges(ctx, pos[0], q, *format, stdout, stderr)
}

func historyPage(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var q engine.ChangesQuery
	registerSeries(fs, &q)
	out := fs.String("o", "", "write the page into directory `DIR` (index.html)")
	var opt render.ChangesPageOptions
	fs.StringVar(&opt.CommitURL, "commit-url", "", "link each commit to `URL`, %s for the commit (https://github.com/OWNER/REPO/commit/%s)")
	fs.StringVar(&opt.RecordURL, "record-url", "", "link each commit's label to its record at `URL`, %s for its path in the store")
	fs.StringVar(&opt.Title, "title", "", "the page's `TITLE`")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		return usagef("want STORE -o DIR")
	}
	return engine.WriteHistoryPage(ctx, pos[0], q, *out, opt, stderr)
}

func historyConfirm(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var o engine.ConfirmOptions
	fs.StringVar(&o.Target, "target", "", "the record's target `NAME`, when the commit has several")
	fs.StringVar(&o.Build, "build", "", "shell `CMD` that builds $TAILGATE_COMMIT's kernel into $TAILGATE_OUT/bzImage")
	fs.StringVar(&o.BuildDir, "build-dir", "", "where --build's outputs go, `DIR`/base and DIR/head (default a temporary directory)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the gate command and do not run it")
	fs.BoolVar(&o.Verbose, "v", false, "the gate's "+verboseUsage)
	args, gateArgs := cmdline.CutDashes(args)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want STORE COMMIT")
	}
	return engine.Confirm(ctx, pos[0], pos[1], o, gateArgs, confirmGate, stdout, stderr)
}
