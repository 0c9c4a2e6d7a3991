package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/plaintext"

	"github.com/tailgate-ci/tailgate/report"
)

// TextOptions controls the text rendering of a report: a comparison, a
// matrix, and the lists of baselines, kernels and a calibration.
type TextOptions struct {
	// Width is the columns every line keeps to (the terminal's, from
	// termwidth); 0 is unlimited, the full rows.
	Width int
	// Verbose shows every row and warning (-v). Without it a comparison
	// shows its gated rows and the warnings about them, and says how many
	// others -v would show: the verdicts lead, not 25 rows of "not
	// gated".
	Verbose bool
}

// WriteText writes m as plain-text tables for a terminal or a CI log,
// each line within o.Width: tables that do not fit are narrowed
// (FitTable), a matrix's one table becomes one per target, and long lines
// wrap.
func WriteText(w io.Writer, m *report.Matrix, o TextOptions) error {
	// Names, kernel releases and warnings come from Result files: each
	// stays one line (plaintext.Line), and no line of the report, which
	// CI logs show, begins with a workflow command (plaintext.Guard).
	g := plaintext.Guard(w)
	ew := &errWriter{w: g}
	tl := textLines{ew: ew, width: o.Width}
	line := tl.line
	const label = 11 // "%-10s " lines continue under their text
	ps := pairings(m)
	shown := m
	if !o.Verbose {
		shown = gatedOnly(m)
	}
	narrow := tooWide(shown, o.Width)
	for _, p := range ps {
		line(2, "%s", p.headline())
	}
	for _, l := range nextSteps(m) {
		line(label, "%-10s %s", "next:", l)
	}
	for _, p := range ps {
		if p.r.Run != nil {
			line(label, "%-10s %s%s", "run:", p.prefix(), runText(*p.r.Run))
		}
		if l := detectionLine(p.r.Detections()); l != "" {
			line(label, "%-10s %s%s", "detects:", p.prefix(), l)
		}
	}
	for i := range m.Targets {
		line(label, "%-10s %s", role(m, i)+":", describe(m, i))
	}
	for _, p := range ps {
		if l := differenceLine(p.r); l != "" {
			line(label, "%-10s %s%s", "differs:", p.prefix(), l)
		}
	}
	for _, warn := range warnings(m) {
		line(2, "warning: %s", warn)
	}
	if len(m.Trends) > 0 {
		line(2, "history:  the candidate against %s's last commits, the median of each commit's trials", m.Trends[0].Ref)
		for _, t := range m.Trends {
			line(4, "  %s", trendLine(t))
		}
	}
	for i, s := range shown.Scenarios {
		if err := writeTextScenario(tl, m, s, m.Scenarios[i], narrow, o.Verbose); err != nil {
			return err
		}
	}
	for _, p := range ps {
		if p.target != "" && len(p.r.RegressionEvidence()) > 0 {
			fmt.Fprintln(ew)
			line(2, "%s vs %s:", p.target, p.ref)
		}
		if err := writeEvidenceText(ew, p.r, o.Width, narrow); err != nil {
			return err
		}
	}
	if err := g.Flush(); err != nil && ew.err == nil {
		return err
	}
	return ew.err
}

// textLines writes the lines of a text report, each wrapped within
// width.
type textLines struct {
	ew    *errWriter
	width int
}

// line writes one line, wrapped at width, its continuations indented by
// hang.
func (t textLines) line(hang int, format string, args ...any) {
	for _, l := range wrapHanging(plaintext.Line(fmt.Sprintf(format, args...)), t.width, hang) {
		fmt.Fprintln(t.ew, l)
	}
}

// writeTextScenario writes scenario s of m (all its rows, or its gated
// ones of all): its heading, what its values are where they are not
// plain quantiles, its tables (narrowed with narrow), the metrics without
// events and the warnings (those about gated tests unless verbose), and
// what -v would add.
func writeTextScenario(tl textLines, m *report.Matrix, s, all report.MatrixScenario, narrow, verbose bool) error {
	fmt.Fprintln(tl.ew)
	tl.line(2, "scenario %s", s.Name)
	if tl.ew.err != nil {
		return tl.ew.err
	}
	if len(s.Metrics) > 0 {
		if note := valuesNote(m, s); note != "" {
			tl.line(2, "%s", note)
		}
		for _, t := range textTables(m, s, tl.width, narrow) {
			if t.title != "" {
				tl.line(2, "%s", t.title)
			}
			if err := t.Render(tl.ew); err != nil {
				return err
			}
		}
	}
	// Metrics without events on any target share one line rather than a
	// warning each.
	empty, warns, hiddenWarns := scenarioNotesOf(m, s.Name, !verbose)
	if len(empty) > 0 {
		tl.line(2, "no events: %s", strings.Join(empty, ", "))
	}
	for _, warn := range warns {
		tl.line(2, "warning: %s", warn)
	}
	if hiddenRows := rowCount(all) - rowCount(s); hiddenRows > 0 || hiddenWarns > 0 {
		var what []string
		if hiddenRows > 0 {
			what = append(what, english.Count(hiddenRows, "row")+" not gated")
		}
		if hiddenWarns > 0 {
			what = append(what, english.Count(hiddenWarns, "warning")+" about what is not gated")
		}
		tl.line(2, "-v shows %s", strings.Join(what, " and "))
	}
	return nil
}

// gatedOnly is m with only the rows in which some target's verdict is
// gated.
func gatedOnly(m *report.Matrix) *report.Matrix {
	out := *m
	out.Scenarios = nil
	for _, s := range m.Scenarios {
		g := report.MatrixScenario{Name: s.Name}
		for _, mm := range s.Metrics {
			rows := slices.DeleteFunc(slices.Clone(mm.Rows), func(r report.MatrixRow) bool { return !rowGated(r) })
			if len(rows) > 0 {
				mm.Rows = rows
				g.Metrics = append(g.Metrics, mm)
			}
		}
		out.Scenarios = append(out.Scenarios, g)
	}
	return &out
}

// rowGated says whether a target's verdict in r is gated.
func rowGated(r report.MatrixRow) bool {
	return slices.ContainsFunc(r.Cells, func(c report.MatrixCell) bool { return c.Verdict != nil && c.Verdict.Gated })
}

// rowCount is how many rows s's tables have.
func rowCount(s report.MatrixScenario) int {
	n := 0
	for _, mm := range s.Metrics {
		n += len(mm.Rows)
	}
	return n
}

// nextSteps says what to do about m's gated verdicts: a regression's
// evidence and how a slowdown that is meant is accepted; what decides an
// undecided test. Nothing when every test passed.
func nextSteps(m *report.Matrix) []string {
	var reg, inc, held int
	evidence := false
	for _, p := range pairings(m) {
		c := p.r.Tally()
		reg += c.Regressions
		inc += c.Inconclusive - c.Unreachable
		held += c.Unreachable
		evidence = evidence || len(p.r.RegressionEvidence()) > 0
	}
	var out []string
	switch {
	case reg > 0 && evidence:
		out = append(out, "the evidence below shows what grew; accept a slowdown that is meant with --threshold METRIC:PCTL=T% or the scenario's gate block")
	case reg > 0:
		out = append(out, "accept a slowdown that is meant with --threshold METRIC:PCTL=T% or the scenario's gate block")
	}
	if inc > 0 {
		out = append(out, "more data decides the inconclusive: a longer --budget (two targets), else more --trials or a longer --duration")
	}
	if held > 0 {
		out = append(out, "no data decides the unreachable: their thresholds lie inside their nuisance bands; gate them wider than the band, or at a percentile the seeds do not move (docs/vms.md)")
	}
	return out
}

// writeText is WriteText with the full rows.
func writeText(w io.Writer, m *report.Matrix) error { return WriteText(w, m, TextOptions{}) }

// titledTable is a table of the text report, with the line that names
// it, if any.
type titledTable struct {
	title string
	*FitTable
}

// textTables lays out scenario s of m: the one table, unless narrow;
// narrowed, in a matrix, one table per target against the reference
// (each the two-target table), each keeping to width.
func textTables(m *report.Matrix, s report.MatrixScenario, width int, narrow bool) []titledTable {
	if !narrow || len(m.Targets) <= 2 {
		t := fitTable(m, s, width, nil)
		t.Narrow = narrow
		return []titledTable{{FitTable: t}}
	}
	var out []titledTable
	for i := 1; i < len(m.Targets); i++ {
		t := fitTable(m, s, width, []int{i})
		t.Narrow = true
		out = append(out, titledTable{title: m.Targets[i].Name + " vs " + m.Targets[0].Name + ":", FitTable: t})
	}
	return out
}

// tooWide says whether any table of m's text report, of a scenario or
// of evidence, is wider than width: then all are narrowed, so that a
// report is laid out one way.
func tooWide(m *report.Matrix, width int) bool {
	if width <= 0 {
		return false
	}
	for _, s := range m.Scenarios {
		if len(s.Metrics) > 0 && fitTable(m, s, width, nil).overflows() {
			return true
		}
	}
	for _, p := range pairings(m) {
		for _, e := range p.r.RegressionEvidence() {
			if evidenceTable(e, width).overflows() {
				return true
			}
		}
	}
	return false
}
