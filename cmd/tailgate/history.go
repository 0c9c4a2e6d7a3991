package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/version"
	"github.com/tailgate-ci/tailgate/report"
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
	commit := fs.String("commit", "", "the commit `SHA` the Result measured (git rev-parse HEAD)")
	at := fs.String("time", "", "the commit's `TIME`, RFC 3339 or Unix seconds (git show -s --format=%cI); default the Result's start")
	ref := fs.String("ref", "", "the `REF` the commit was pushed to (main)")
	replace := fs.Bool("replace", false, "overwrite a record of the same commit and target")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want STORE RESULT, got %s", english.Count(len(pos), "argument"))
	}
	if *commit == "" {
		return usagef("--commit SHA is required (in CI: --commit \"$GITHUB_SHA\")")
	}
	var when time.Time
	if *at != "" {
		if when, err = history.ParseTime(*at); err != nil {
			return usagef("--time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", *at)
		}
	}
	s, err := engine.OpenHistory(pos[0])
	if err != nil {
		return err
	}
	e, err := s.AddResult(ctx, pos[1], history.Origin{Commit: *commit, At: when, Ref: *ref, Provenance: history.CIProvenance(version.Get(), os.Getenv)}, history.AddOptions{Replace: *replace})
	if err != nil {
		return engine.HistoryError(err)
	}
	fmt.Fprintf(stderr, "recorded %s target %s (%s) in %s as %s\n", e.Commit, e.Target, english.Count(len(e.Scenarios), "scenario"), s, e.Path)
	return nil
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
	p, err := history.NewPolicy(*keep, *older)
	if err != nil {
		return usagef("%w", err)
	}
	s, err := engine.OpenHistory(pos[0])
	if err != nil {
		return err
	}
	removed, err := s.Prune(ctx, p)
	if err != nil {
		return engine.HistoryError(err)
	}
	fmt.Fprintf(stderr, "removed %s from %s\n", english.Count(len(removed), "record"), s)
	return nil
}

// seriesFlags are what changes and page share.
type seriesFlags struct {
	metrics, percentiles []string
	level                float64
}

func (f *seriesFlags) register(fs *flag.FlagSet) {
	list := func(dst *[]string) func(string) error {
		return func(s string) error {
			for _, x := range strings.Split(s, ",") {
				if x = strings.TrimSpace(x); x != "" {
					*dst = append(*dst, x)
				}
			}
			return nil
		}
	}
	fs.Func("metric", "test only metric `M` (repeatable, or a comma list); default what is gated", list(&f.metrics))
	fs.Func("percentile", "test percentile `P` (p50, p90, p99, p99.9, max; repeatable); default what is gated", list(&f.percentiles))
	fs.Float64Var(&f.level, "level", changepoint.DefaultLevel, "family-wise false-alarm rate over every series tested")
}

// detect finds the change points of the series the flags select in the
// store spec names (engine.FindChanges).
func (f *seriesFlags) detect(ctx context.Context, command, spec string, log io.Writer) (*changepoint.Report, error) {
	return engine.FindChanges(ctx, command, spec, report.Selection{Metrics: f.metrics, Percentiles: f.percentiles}, f.level, log)
}

func historyChanges(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var sf seriesFlags
	sf.register(fs)
	format := fs.String("format", "text", "`FORMAT`: text, json or markdown")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want STORE")
	}
	if !slices.Contains(render.ChangesFormats, *format) {
		return usagef("--format %q: want text, json or markdown", *format)
	}
	rep, err := sf.detect(ctx, "changes", pos[0], stderr)
	if err != nil {
		return err
	}
	return render.WriteChanges(stdout, rep, *format)
}

func historyPage(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var sf seriesFlags
	sf.register(fs)
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
	rep, err := sf.detect(ctx, "page", pos[0], stderr)
	if err != nil {
		return err
	}
	path, err := render.WriteChangesPageDir(*out, rep, opt)
	if err != nil {
		return infra(err)
	}
	fmt.Fprintf(stderr, "wrote %s: %d series, %s\n", path, len(rep.Series), english.Count(len(rep.Changes), "change point"))
	return nil
}

func historyConfirm(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	target := fs.String("target", "", "the record's target `NAME`, when the commit has several")
	build := fs.String("build", "", "shell `CMD` that builds $TAILGATE_COMMIT's kernel into $TAILGATE_OUT/bzImage")
	dir := fs.String("build-dir", "", "where --build's outputs go, `DIR`/base and DIR/head (default a temporary directory)")
	dry := fs.Bool("dry-run", false, "print the gate command and do not run it")
	verbose := fs.Bool("v", false, "the gate's "+verboseUsage)
	args, gateArgs := cmdline.CutDashes(args)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want STORE COMMIT")
	}
	p, err := engine.ConfirmPair(ctx, pos[0], pos[1], engine.ConfirmOptions{Target: *target, Build: *build, BuildDir: *dir}, stderr)
	if err != nil {
		return err
	}
	if *verbose {
		gateArgs = append(gateArgs, "-v")
	}
	gargs := p.GateArgs(gateArgs)
	fmt.Fprintf(stderr, "confirming %s (after %s, target %s): tailgate gate %s\n", history.Short(p.Head.Commit), history.Short(p.Base.Commit), p.Head.Target, engine.ShellArgs(gargs))
	if *dry {
		fmt.Fprintf(stdout, "tailgate gate %s\n", engine.ShellArgs(gargs))
		return nil
	}
	return confirmGate(ctx, gargs, stdout, stderr)
}
