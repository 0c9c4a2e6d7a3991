package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/version"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// What the history subcommands do once their flags are read.

// HistoryAdd is how history add files a Result: under Commit, at Time
// (RFC 3339 or Unix seconds; empty: the Result's start), pushed to Ref,
// over a record of the same commit and target when Replace.
type HistoryAdd struct {
	Commit, Time, Ref string
	Replace           bool
}

// AddHistory records the Result file path in the store spec names, with
// this process' CI provenance, and says where on log.
func AddHistory(ctx context.Context, spec, path string, a HistoryAdd, log io.Writer) error {
	if a.Commit == "" {
		return Inputf("--commit SHA is required (in CI: --commit \"$GITHUB_SHA\")")
	}
	var when time.Time
	if a.Time != "" {
		var err error
		if when, err = history.ParseTime(a.Time); err != nil {
			return Inputf("--time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", a.Time)
		}
	}
	s, err := OpenHistory(spec)
	if err != nil {
		return err
	}
	o := history.Origin{Commit: a.Commit, At: when, Ref: a.Ref, Provenance: history.CIProvenance(version.Get(), os.Getenv)}
	e, err := s.AddResult(ctx, path, o, history.AddOptions{Replace: a.Replace, Check: scenarios.CheckParams})
	if err != nil {
		return HistoryError(err)
	}
	fmt.Fprintf(log, "recorded %s target %s (%s) in %s as %s\n", e.Commit, e.Target, english.Count(len(e.Scenarios), "scenario"), s, e.Path)
	return nil
}

// PruneHistory removes from the store spec names the records of commits
// beyond the newest keep, or older than olderThan (history.NewPolicy),
// and says how many on log.
func PruneHistory(ctx context.Context, spec string, keep int, olderThan string, log io.Writer) error {
	p, err := history.NewPolicy(keep, olderThan)
	if err != nil {
		return Inputf("%w", err)
	}
	s, err := OpenHistory(spec)
	if err != nil {
		return err
	}
	removed, err := s.Prune(ctx, p)
	if err != nil {
		return HistoryError(err)
	}
	fmt.Fprintf(log, "removed %s from %s\n", english.Count(len(removed), "record"), s)
	return nil
}

// ChangesQuery is which series history changes and page test, and at
// what family-wise level.
type ChangesQuery struct {
	report.Selection
	Level float64
}

// WriteHistoryChanges writes the change points of the store spec names
// to w as format, one of render.ChangesFormats (FindChanges; warnings
// on log).
func WriteHistoryChanges(ctx context.Context, spec string, q ChangesQuery, format string, w, log io.Writer) error {
	if !slices.Contains(render.ChangesFormats, format) {
		return Inputf("--format %q: want text, json or markdown", format)
	}
	rep, err := FindChanges(ctx, "changes", spec, q.Selection, q.Level, log)
	if err != nil {
		return err
	}
	return render.WriteChanges(w, rep, format)
}

// WriteHistoryPage writes the trend page of the store spec names into
// dir (render.WriteChangesPageDir) and says what it holds on log.
func WriteHistoryPage(ctx context.Context, spec string, q ChangesQuery, dir string, opt render.ChangesPageOptions, log io.Writer) error {
	rep, err := FindChanges(ctx, "page", spec, q.Selection, q.Level, log)
	if err != nil {
		return err
	}
	path, err := render.WriteChangesPageDir(dir, rep, opt)
	if err != nil {
		return Infra(err)
	}
	fmt.Fprintf(log, "wrote %s: %d series, %s\n", path, len(rep.Series), english.Count(len(rep.Changes), "change point"))
	return nil
}

// Confirm gates COMMIT against the commit before it in the store spec
// names (ConfirmPair), in one job: gate runs tailgate gate with the
// pair's arguments and gateArgs after them (-v added when o.Verbose), or,
// with o.DryRun, the command is printed on stdout instead.
func Confirm(ctx context.Context, spec, commit string, o ConfirmOptions, gateArgs []string, gate func(context.Context, []string, io.Writer, io.Writer) error, stdout, stderr io.Writer) error {
	p, err := ConfirmPair(ctx, spec, commit, o, stderr)
	if err != nil {
		return err
	}
	if o.Verbose {
		gateArgs = append(gateArgs, "-v")
	}
	args := p.GateArgs(gateArgs)
	fmt.Fprintf(stderr, "confirming %s (after %s, target %s): tailgate gate %s\n", history.Short(p.Head.Commit), history.Short(p.Base.Commit), p.Head.Target, ShellArgs(args))
	if o.DryRun {
		fmt.Fprintf(stdout, "tailgate gate %s\n", ShellArgs(args))
		return nil
	}
	return gate(ctx, args, stdout, stderr)
}
