package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// HistoryError classifies a history store's error: what the input or the
// store holds is an InputError, the machinery (git, the disk) an
// InfraError.
func HistoryError(err error) error {
	switch {
	case err == nil:
		return nil
	case history.IsInput(err):
		return &InputError{err}
	}
	return Infra(err)
}

// OpenHistory opens the history store spec names (history.Open).
func OpenHistory(spec string) (*history.Store, error) {
	s, err := history.Open(spec)
	return s, HistoryError(err)
}

// ReadHistory opens the store spec names and reads it; close the View.
func ReadHistory(ctx context.Context, spec string) (*history.Store, *history.View, error) {
	s, err := OpenHistory(spec)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.Read(ctx)
	return s, v, HistoryError(err)
}

// CheckHistory reads every record of the store spec names and writes each
// problem to w (history.View.Check), then a line of what the store holds.
// A damaged record is an InputError.
func CheckHistory(ctx context.Context, spec string, w io.Writer) error {
	s, v, err := ReadHistory(ctx, spec)
	if err != nil {
		return err
	}
	defer v.Close()
	errs := 0
	for _, p := range v.Check() {
		fmt.Fprintln(w, p)
		if !p.Warning {
			errs++
		}
	}
	if errs > 0 {
		them := english.Plural(errs, "it", "them")
		return Inputf("%s: %s damaged; restore %s from the store's history (git log of its branch) or remove %s with history prune", s,
			english.Plural(errs, "1 record is", fmt.Sprintf("%d records are", errs)), them, them)
	}
	fmt.Fprintf(w, "%s: format %d, %s of %s, %s\n", s, v.Index.Format, english.Count(len(v.Index.Entries), "record"),
		english.Count(len(v.Index.Commits()), "commit"), english.Plural(len(v.Index.Entries), "whole", "all whole"))
	return nil
}

// FindChanges finds the change points of the series sel selects in the
// store spec names (DetectChanges), the family held at level. They are
// read from the records' summaries: a record that is missing or not of
// its indexed size is warned of on log (View.Present), as history check
// would name it; command is the history subcommand that asks.
func FindChanges(ctx context.Context, command, spec string, sel report.Selection, level float64, log io.Writer) (*changepoint.Report, error) {
	if err := report.CheckSelection(sel); err != nil {
		return nil, Inputf("--percentile: %v", err)
	}
	if level <= 0 || level >= 1 {
		return nil, Inputf("--level %g: want a rate between 0 and 1, such as 0.01", level)
	}
	_, v, err := ReadHistory(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	if ps := v.Present(); len(ps) > 0 {
		for _, p := range ps {
			fmt.Fprintf(log, "tailgate history %s: warning: %s: %v\n", command, p.Path, p.Err)
		}
		fmt.Fprintf(log, "tailgate history %s: warning: %s of %s %s missing or damaged (what this reads of %s comes from %s); run tailgate history check %s\n",
			command, english.Count(len(ps), "record"), spec, english.Plural(len(ps), "is", "are"), english.Plural(len(ps), "it", "them"),
			english.Plural(len(ps), "its summary", "their summaries"), spec)
	}
	rep, err := DetectChanges(v, sel, changepoint.Options{Level: level})
	if errors.Is(err, ErrNoSeries) {
		return nil, Inputf("%s: %w", spec, err)
	} else if err != nil {
		return nil, Inputf("%w; run tailgate history check %s", err, spec)
	}
	return rep, nil
}

// ConfirmOptions are how history confirm finds and boots its two commits.
type ConfirmOptions struct {
	// Target is the record's target, when the commit has several.
	Target string
	// Build, BuildDir: history.Pair.Boot's shell command and its outputs.
	Build, BuildDir string
	// DryRun prints the gate's command instead of running it (Confirm);
	// Verbose passes -v to the gate.
	DryRun, Verbose bool
}

// ConfirmPair finds COMMIT and the commit before it in the store spec
// names, checks the scenarios their records name (CheckConfirmScenarios)
// and gets their kernels (history.Pair.Boot, progress on log).
func ConfirmPair(ctx context.Context, spec, commit string, o ConfirmOptions, log io.Writer) (*history.Pair, error) {
	s, err := OpenHistory(spec)
	if err != nil {
		return nil, err
	}
	p, err := s.Pair(ctx, commit, o.Target)
	if err != nil {
		return nil, HistoryError(err)
	}
	if err := CheckConfirmScenarios(p); err != nil {
		return nil, err
	}
	if err := p.Boot(ctx, o.Build, o.BuildDir, log); errors.Is(err, history.ErrBadInput) {
		return nil, &InputError{err}
	} else if err != nil {
		return nil, Infra(err)
	}
	return p, nil
}

// CheckConfirmScenarios refuses a record's scenario that the gate
// confirm runs could not take by name: a name outside the rules of a
// scenario's name (a record is untrusted: "-h" or "/etc/shadow" would
// be a flag or a file the gate reads as root), or one of a scenario file,
// which a name does not find.
func CheckConfirmScenarios(p *history.Pair) error {
	for _, name := range p.Scenarios {
		if !scenarios.ValidName(name) {
			return Inputf("the records of %s name scenario %s, which is no scenario name (%s); the record is not tailgate's or was edited", history.Short(p.Head.Commit), plaintext.Line(fmt.Sprintf("%q", name)), scenarios.NameRule)
		}
		if _, err := scenarios.Lookup("builtin:" + name); err != nil {
			return Inputf("scenario %s of the records of %s is not built in, and confirm runs built-in scenarios only; run its file yourself: tailgate gate FILE %s", name, history.Short(p.Head.Commit), ShellArgs(p.GateArgs(nil)[:4]))
		}
	}
	return nil
}

// ShellArgs writes args as a shell takes them (cmdline.Quote), with a
// space after (nothing for none), to stand before more.
func ShellArgs(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(cmdline.Quote(a) + " ")
	}
	return b.String()
}

// AttachTrends adds to m, under its verdicts, a line per gated percentile
// with the candidate against the last commits of the history store spec
// names (AddTrends). A store that does not read is said on log
// and the report goes without them: the verdict, and the exit code, are
// the gate's.
func AttachTrends(ctx context.Context, m *report.Matrix, spec string, opt TrendOptions, log io.Writer) {
	if spec == "" || m == nil {
		return
	}
	if err := AddTrends(ctx, m, spec, opt); err != nil {
		fmt.Fprintf(log, "tailgate: --history %s: %v; the report has no history lines (tailgate history check %s)\n", spec, err, spec)
	}
}
