package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// changesNS words a latency.
func changesNS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 1e9:
		return fmt.Sprintf("%.3gs", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gµs", v/1e3)
	}
	return fmt.Sprintf("%.3gns", v)
}

func changesPct(r float64) string { return fmt.Sprintf("%+.1f%%", (r-1)*100) }

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func changeWords(c changepoint.Change) (kind, before, after, shift string) {
	kind = "improvement"
	if c.Regression() {
		kind = "regression"
	}
	before = fmt.Sprintf("%s [%s, %s] (%s)", changesNS(c.Before.Center), changesNS(c.Before.Lo), changesNS(c.Before.Hi), english.Count(c.Before.Commits, "commit"))
	after = fmt.Sprintf("%s [%s, %s] (%s)", changesNS(c.After.Center), changesNS(c.After.Lo), changesNS(c.After.Hi), english.Count(c.After.Commits, "commit"))
	shift = fmt.Sprintf("%s [%s, %s]", changesPct(c.Ratio.Center), changesPct(c.Ratio.Lo), changesPct(c.Ratio.Hi))
	return
}

// changeWarning says what a warning means, in one line.
func changeWarning(w changepoint.Warning) string {
	switch w.Kind {
	case changepoint.WarnShort:
		return fmt.Sprintf("%s: %s, a change point needs %d; not tested", w.Key, english.Count(w.Commits, "commit"), w.Need)
	case changepoint.WarnFewTrials:
		return fmt.Sprintf("%s: %s fewer than 6 trials; %s the range of %s trials (below 95%%)", w.Key,
			english.Plural(w.Commits, "1 commit has", fmt.Sprintf("%d commits have", w.Commits)),
			english.Plural(w.Commits, "its interval is", "their intervals are"), english.Plural(w.Commits, "its", "their"))
	case changepoint.WarnFewValues:
		return fmt.Sprintf("%s: %s, %s in all: no split of them can reach p < %g; not tested (record more trials a commit)", w.Key,
			english.Count(w.Commits, "commit"), english.Count(w.Trials, "trial"), w.Level)
	case changepoint.WarnUnreachable:
		return fmt.Sprintf("%s: the permutation test ran too few shuffles to reach its level; it needs about %d", w.Key, w.Need)
	}
	return fmt.Sprintf("%s: %s", w.Key, w.Kind)
}

// changesHeadline says how many series were tested, at what level, and how
// many change points were found: "2 of 3 series tested, ...; 1 change
// point".
func changesHeadline(r *changepoint.Report) string {
	n := len(r.Series)
	found := english.Plural(len(r.Changes), "1 change point", fmt.Sprintf("%d change points", len(r.Changes)))
	if len(r.Changes) == 0 {
		found = "no change point"
	}
	switch {
	case n == 0:
		return "no series to test"
	case r.Tested == 0 && slices.ContainsFunc(r.Warnings, func(w changepoint.Warning) bool { return w.Kind == changepoint.WarnFewValues }):
		return fmt.Sprintf("%d series, %s too short to test (see the warnings)", n, english.Plural(n, "not tested: it is", "none tested: each is"))
	case r.Tested == 0:
		return fmt.Sprintf("%d series, %s fewer than the %d commits a change point needs",
			n, english.Plural(n, "not tested: it has", "none tested: each has"), 2*r.MinSize)
	case r.Tested < n:
		return fmt.Sprintf("%d of %d series tested, family-wise level %g (Holm): %s; %d too short to test",
			r.Tested, n, r.Level, found, n-r.Tested)
	}
	return fmt.Sprintf("%d series tested, family-wise level %g (Holm): %s", n, r.Level, found)
}

// writeChangesText writes the report as plain lines, for a terminal or a CI log
// (plaintext.Guard: keys come from the store's Results).
func writeChangesText(w io.Writer, r *changepoint.Report) error {
	g := plaintext.Guard(w)
	defer g.Flush()
	w = g
	fmt.Fprintln(w, changesHeadline(r))
	for _, c := range r.Changes {
		kind, before, after, shift := changeWords(c)
		fmt.Fprintf(w, "\n%s %s at %s (after %s), %s\n", c.Key, kind, shortCommit(c.Commit), shortCommit(c.Prev), c.Time.UTC().Format(time.RFC3339))
		fmt.Fprintf(w, "  before %s\n  after  %s\n  change %s  p=%.2g (level %.2g)\n", before, after, shift, c.P, c.Alpha)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "  %s\n", changeWarning(x))
		}
	}
	return nil
}

// writeChangesMarkdown writes the report as a Markdown table.
func writeChangesMarkdown(w io.Writer, r *changepoint.Report) error {
	fmt.Fprintf(w, "### changepoint.Change points\n\n%s.\n\n", changesHeadline(r))
	if len(r.Changes) > 0 {
		fmt.Fprintln(w, "| commit | time | target | scenario | metric | percentile | before | after | change | p (level) |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, c := range r.Changes {
			kind, before, after, shift := changeWords(c)
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s | %s | **%s** %s | %.2g (%.2g) |\n",
				shortCommit(c.Commit), c.Time.UTC().Format("2006-01-02 15:04"), changesCell(c.Key.Target), changesCell(c.Key.Scenario),
				changesCell(c.Key.Metric), c.Key.Percentile, before, after, kind, shift, c.P, c.Alpha)
		}
	}
	if len(r.Warnings) > 0 {
		if len(r.Changes) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Warnings:")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", changesCell(changeWarning(x)))
		}
	}
	return nil
}

func changesCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// writeChangesJSON writes the report as JSON.
func writeChangesJSON(w io.Writer, r *changepoint.Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
