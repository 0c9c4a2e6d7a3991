package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// writeMarkdown writes m as GitHub-flavoured Markdown for a job summary
// or a pull-request comment: the headlines first, then a collapsible
// section per scenario, open when it holds a regression.
func writeMarkdown(w io.Writer, m *report.Matrix) error {
	ew := &errWriter{w: w}
	ps := pairings(m)
	for _, p := range ps {
		fmt.Fprintf(ew, "%s\n\n", mdEscape(p.headline()))
	}
	for _, p := range ps {
		if p.r.Run != nil {
			fmt.Fprintf(ew, "%sBase and head in one job: %s.\n\n", mdEscape(p.prefix()), mdEscape(runText(*p.r.Run)))
		}
		if line := detectionLine(p.r.Detections()); line != "" {
			fmt.Fprintf(ew, "%s%s.\n\n", mdEscape(p.prefix()), mdEscape(line))
		}
	}
	var sides []string
	for i := range m.Targets {
		sides = append(sides, role(m, i)+": "+mdEscape(describe(m, i)))
	}
	fmt.Fprintf(ew, "%s\n", capitalize(strings.Join(sides, " · ")))
	for _, p := range ps {
		if line := differenceLine(p.r); line != "" {
			fmt.Fprintf(ew, "\n%sWhat differs: %s.\n", mdEscape(p.prefix()), mdEscape(line))
		}
	}
	if warns := warnings(m); len(warns) > 0 {
		fmt.Fprintf(ew, "\n")
		for _, warn := range warns {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdEscape(warn))
		}
	}
	writeTrendsMarkdown(ew, m.Trends)
	header := tableHeader(m)
	for i := range header {
		header[i] = mdEscape(header[i])
	}
	for _, s := range m.Scenarios {
		writeMarkdownScenario(ew, m, s, header)
	}
	return ew.err
}

// writeMarkdownScenario writes scenario s of m as a collapsible section,
// open when it holds a regression: its table under header, the metrics
// without events, the warnings and the evidence of a regression.
func writeMarkdownScenario(ew *errWriter, m *report.Matrix, s report.MatrixScenario, header []string) {
	ps := pairings(m)
	var reg int
	for _, p := range ps {
		if rs := p.r.Scenario(s.Name); rs != nil {
			for _, v := range rs.Verdicts {
				if v.Kind == stats.Regression {
					reg++
				}
			}
		}
	}
	open, status := "", "no regressions"
	if reg > 0 {
		open = " open"
		status = fmt.Sprintf("%d %s", reg, english.Plural(reg, "regression", "regressions"))
	}
	fmt.Fprintf(ew, "\n<details%s>\n<summary><b>%s</b>: %s</summary>\n\n", open, htmlEscape(s.Name), status)
	if len(s.Metrics) > 0 {
		if note := valuesNote(m, s); note != "" {
			fmt.Fprintf(ew, "%s\n\n", mdEscape(capitalize(note)))
		}
		fmt.Fprintf(ew, "| %s |\n|---|---|--:|%s\n", strings.Join(header, " | "), strings.Repeat("--:|--:|---|--:|---|", len(m.Targets)-1))
	}
	for _, mm := range s.Metrics {
		for _, row := range mm.Rows {
			cells := tableRow(mm.Name, row, mdVerdict)[1:]
			cells[0] = mdEscape(cells[0]) // the percentile, as the Result names it
			fmt.Fprintf(ew, "| %s | %s |\n", mdCode(mm.Name), strings.Join(cells, " | "))
		}
	}
	empty, warns := scenarioNotes(m, s.Name)
	if len(empty) > 0 {
		codes := make([]string, len(empty))
		for i, e := range empty {
			codes[i] = mdCode(e)
		}
		fmt.Fprintf(ew, "\nNo events: %s\n", strings.Join(codes, ", "))
	}
	if len(warns) > 0 {
		fmt.Fprintf(ew, "\nWarnings:\n")
		for _, warn := range warns {
			fmt.Fprintf(ew, "- %s\n", mdEscape(warn))
		}
	}
	for _, p := range ps {
		if p.target != "" && hasEvidence(p.r, s.Name) {
			fmt.Fprintf(ew, "\n%s vs %s:\n", mdEscape(p.target), mdEscape(p.ref))
		}
		writeEvidenceMarkdown(ew, p.r, s.Name)
	}
	fmt.Fprintf(ew, "\n</details>\n")
}

// mdVerdict is a verdict as the Markdown table shows it, coloured.
func mdVerdict(v stats.Verdict) string {
	switch v.Kind {
	case stats.Regression:
		return "🔴 **regression**"
	case stats.Improvement:
		return "🟢 improvement"
	case stats.Inconclusive:
		return "🟡 " + verdictLabel(v)
	}
	return verdictLabel(v)
}

// capitalize upper-cases the first letter of s, an ASCII word.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// hasEvidence reports whether r has evidence of a regression in scenario.
func hasEvidence(r *report.Report, scenario string) bool {
	for _, e := range r.RegressionEvidence() {
		if e.Scenario == scenario {
			return true
		}
	}
	return false
}
