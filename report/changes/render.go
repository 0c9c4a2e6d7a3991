package changes

import (
	"encoding/json"
	"fmt"
	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"io"
	"math"
	"strings"
	"time"
)

// ns words a latency.
func ns(v float64) string {
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

func pct(r float64) string { return fmt.Sprintf("%+.1f%%", (r-1)*100) }

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func (c Change) words() (kind, before, after, shift string) {
	kind = "improvement"
	if c.Regression() {
		kind = "regression"
	}
	before = fmt.Sprintf("%s [%s, %s] (%d commits)", ns(c.Before.Center), ns(c.Before.Lo), ns(c.Before.Hi), c.Before.Commits)
	after = fmt.Sprintf("%s [%s, %s] (%d commits)", ns(c.After.Center), ns(c.After.Lo), ns(c.After.Hi), c.After.Commits)
	shift = fmt.Sprintf("%s [%s, %s]", pct(c.Ratio.Center), pct(c.Ratio.Lo), pct(c.Ratio.Hi))
	return
}

// word says what a warning means, in one line.
func (w Warning) word() string {
	switch w.Kind {
	case WarnShort:
		return fmt.Sprintf("%s: %d commits, a change point needs %d; not tested", w.Key, w.Commits, w.Need)
	case WarnFewTrials:
		return fmt.Sprintf("%s: %d commits have fewer than 6 trials; their intervals are the range of their trials (below 95%%)", w.Key, w.Commits)
	case WarnUnreachable:
		return fmt.Sprintf("%s: the permutation test ran too few shuffles to reach its level; it needs about %d", w.Key, w.Need)
	}
	return fmt.Sprintf("%s: %s", w.Key, w.Kind)
}

// WriteText writes the report as plain lines, for a terminal or a CI log
// (plaintext.Guard: keys come from the store's Results).
func (r *Report) WriteText(w io.Writer) error {
	g := plaintext.Guard(w)
	defer g.Flush()
	w = g
	fmt.Fprintf(w, "%d series tested, family-wise level %g (Holm); %d change points\n", len(r.Series), r.Level, len(r.Changes))
	for _, c := range r.Changes {
		kind, before, after, shift := c.words()
		fmt.Fprintf(w, "\n%s %s at %s (after %s), %s\n", c.Key, kind, shortCommit(c.Commit), shortCommit(c.Prev), c.Time.UTC().Format(time.RFC3339))
		fmt.Fprintf(w, "  before %s\n  after  %s\n  change %s  p=%.2g (level %.2g, permutation test)\n", before, after, shift, c.P, c.Alpha)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "  %s\n", x.word())
		}
	}
	return nil
}

// WriteMarkdown writes the report as a Markdown table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "### Change points\n\n%d series tested, family-wise level %g (Holm): %d change points.\n\n", len(r.Series), r.Level, len(r.Changes))
	if len(r.Changes) > 0 {
		fmt.Fprintln(w, "| commit | time | target | scenario | metric | percentile | before | after | change | p (level) |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, c := range r.Changes {
			kind, before, after, shift := c.words()
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s | %s | **%s** %s | %.2g (%.2g) |\n",
				shortCommit(c.Commit), c.Time.UTC().Format("2006-01-02 15:04"), mdEscape(c.Key.Target), mdEscape(c.Key.Scenario),
				mdEscape(c.Key.Metric), c.Key.Percentile, before, after, kind, shift, c.P, c.Alpha)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", mdEscape(x.word()))
		}
	}
	return nil
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
