package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

// evidenceFrames is how many stack frames a report shows per event.
const evidenceFrames = 3

// eventTask names the task an event happened to.
func eventTask(e result.Event) string {
	return fmt.Sprintf("%s %d", e.Comm, e.TID)
}

// eventOther names the task switched out for it, or "".
func eventOther(e result.Event) string {
	if e.Other == nil {
		return ""
	}
	return fmt.Sprintf("%s %d (prio %d)", e.Other.Comm, e.Other.TID, e.Other.Prio)
}

// evidenceContributors is how many contributors of an event's
// interference a report names.
const evidenceContributors = 2

// eventInterference names the largest contributors of what else ran on
// the event's CPU in its window, or "" when it was not measured.
func eventInterference(e result.Event) string {
	in := e.Interference
	if in == nil {
		return ""
	}
	var parts []string
	for i, c := range in.Top {
		if i == evidenceContributors {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", c.Kind, c.Name, FormatNs(float64(c.Ns))))
	}
	s := strings.Join(parts, ", ")
	if s == "" {
		s = "none"
	}
	if in.Partial {
		s += " (partial)"
	}
	return s
}

// eventFrames is the top frames of an event's stacks, kernel then user,
// without offsets.
func eventFrames(e result.Event) string {
	var fs []string
	for _, st := range [][]string{e.KernelStack, e.UserStack} {
		for i, f := range st {
			if i == evidenceFrames {
				fs = append(fs, "…")
				break
			}
			if name, _, ok := strings.Cut(f, "+0x"); ok {
				f = name
			}
			fs = append(fs, f)
		}
	}
	return strings.Join(fs, " ← ")
}

// evidenceRows is the table body of one Evidence, both sides.
func evidenceRows(e report.Evidence) [][]string {
	var rows [][]string
	for _, side := range []struct {
		name string
		evs  []result.Event
	}{{"candidate", e.Cand}, {"baseline", e.Base}} {
		for _, ev := range side.evs {
			rows = append(rows, []string{
				side.name, FormatNs(float64(ev.LatencyNs)), eventTask(ev),
				fmt.Sprint(ev.CPU), eventOther(ev), eventInterference(ev), eventFrames(ev),
			})
		}
	}
	return rows
}

var evidenceHeader = []string{"side", "latency", "task", "cpu", "ran instead", "interference on cpu", "stack (innermost first)"}

// evidenceColumns are the evidence table's columns. Narrowed, the side
// heads its events' rows, and the stack, then the interference, then what
// ran instead, then the task leave the row for lines of their own.
var evidenceColumns = []Column{
	{Header: evidenceHeader[0], Align: left, Group: true},
	{Header: evidenceHeader[1], Align: right},
	{Header: evidenceHeader[2], Align: left, Fold: 4},
	{Header: evidenceHeader[3], Align: right},
	{Header: evidenceHeader[4], Align: left, Fold: 3},
	{Header: evidenceHeader[5], Align: left, Fold: 2},
	{Header: evidenceHeader[6], Align: left, Fold: 1},
}

// evidenceTable is e's table, within width.
func evidenceTable(e report.Evidence, width int) *FitTable {
	t := &FitTable{Columns: evidenceColumns, Width: width}
	for _, row := range evidenceRows(e) {
		t.Append(row)
	}
	return t
}

// percentName is a quantile as a percentile's name: 0.99 is p99.
func percentName(q float64) string {
	return "p" + strconv.FormatFloat(q*100, 'f', -1, 64)
}

// grownHead says what the grown frames of e are shares of.
func grownHead(e report.Evidence) string {
	g := e.Grown
	return fmt.Sprintf("what grew in the requests above %s of %s in %s: on-CPU stack samples, each function's share as the innermost frame (baseline %d, candidate %d samples)",
		percentName(g.Quantile), e.Metric, e.Scenario, g.BaseSamples, g.CandSamples)
}

// grownLines are e's grown frames, one a line, or why there are none;
// nil when neither side was sampled.
func grownLines(e report.Evidence) []string {
	g := e.Grown
	switch {
	case g.BaseSamples+g.CandSamples == 0:
		return nil
	case g.BaseSamples == 0 || g.CandSamples == 0:
		return []string{"one side has no samples: nothing to compare"}
	case len(g.Frames) == 0:
		return []string{"no function's share grew by a point"}
	}
	var out []string
	for _, f := range g.Frames {
		k := ""
		if f.Kernel {
			k = " [kernel]"
		}
		out = append(out, fmt.Sprintf("%s%s: %.0f%% → %.0f%% (+%.0f points)", f.Function, k, 100*f.Base, 100*f.Cand, 100*f.Growth()))
	}
	return out
}

// writeEvidenceText writes the evidence of r's regressions as tables
// within width (0: unlimited), narrowed if narrow.
func writeEvidenceText(ew *errWriter, r *report.Report, width int, narrow bool) error {
	for _, e := range r.RegressionEvidence() {
		if lines := grownLines(e); lines != nil {
			fmt.Fprintln(ew)
			for _, l := range wrapHanging(grownHead(e)+":", width, 2) {
				fmt.Fprintln(ew, l)
			}
			for _, line := range lines {
				for _, l := range wrapHanging("  "+line, width, 4) {
					fmt.Fprintln(ew, l)
				}
			}
		}
		if len(e.Base)+len(e.Cand) == 0 {
			continue
		}
		fmt.Fprintln(ew)
		for _, l := range wrapHanging(fmt.Sprintf("slowest events of %s in %s", e.Metric, e.Scenario), width, 2) {
			fmt.Fprintln(ew, l)
		}
		t := evidenceTable(e, width)
		t.Narrow = narrow
		if err := t.Render(ew); err != nil {
			return err
		}
	}
	return ew.err
}

// writeEvidenceMarkdown writes the evidence of s's regressions (a scenario
// of r) as Markdown tables.
func writeEvidenceMarkdown(ew *errWriter, r *report.Report, scenario string) {
	for _, e := range r.RegressionEvidence() {
		if e.Scenario != scenario {
			continue
		}
		if lines := grownLines(e); lines != nil {
			fmt.Fprintf(ew, "\n%s:\n\n", mdEscape(strings.ToUpper(grownHead(e)[:1])+grownHead(e)[1:]))
			for _, l := range lines {
				fmt.Fprintf(ew, "- %s\n", mdEscape(l))
			}
		}
		if len(e.Base)+len(e.Cand) == 0 {
			continue
		}
		fmt.Fprintf(ew, "\nSlowest events of `%s`:\n\n", e.Metric)
		fmt.Fprintf(ew, "| %s |\n|---|--:|---|--:|---|---|---|\n", strings.Join(evidenceHeader, " | "))
		for _, row := range evidenceRows(e) {
			for i := range row {
				row[i] = mdEscape(row[i])
			}
			fmt.Fprintf(ew, "| %s |\n", strings.Join(row, " | "))
		}
	}
}
