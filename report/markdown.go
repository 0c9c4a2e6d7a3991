package report

import (
	"fmt"
	"io"
	"strings"
)

// writeMarkdown writes m as GitHub-flavoured Markdown for a job summary
// or a pull-request comment: the headlines first, then a collapsible
// section per scenario, open when it holds a regression.
func writeMarkdown(w io.Writer, m *Matrix) error {
	ew := &errWriter{w: w}
	ps := m.pairings()
	for _, p := range ps {
		fmt.Fprintf(ew, "%s\n\n", mdEscape(p.headline()))
	}
	for _, p := range ps {
		if p.r.Run != nil {
			fmt.Fprintf(ew, "%sBase and head in one job: %s.\n\n", mdEscape(p.prefix()), mdEscape(p.r.Run.String()))
		}
	}
	var sides []string
	for i := range m.Targets {
		sides = append(sides, m.role(i)+": "+mdEscape(m.describe(i)))
	}
	fmt.Fprintf(ew, "%s\n", capitalize(strings.Join(sides, " · ")))
	if warns := m.warnings(); len(warns) > 0 {
		fmt.Fprintf(ew, "\n")
		for _, warn := range warns {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdEscape(warn))
		}
	}
	header := m.tableHeader()
	for i := range header {
		header[i] = mdEscape(header[i])
	}
	for _, s := range m.Scenarios {
		var reg int
		for _, p := range ps {
			if rs := p.r.scenario(s.Name); rs != nil {
				for _, v := range rs.Verdicts {
					if v.Kind == Regression {
						reg++
					}
				}
			}
		}
		open, status := "", "no regressions"
		if reg > 0 {
			open = " open"
			status = fmt.Sprintf("%d %s", reg, plural(reg, "regression", "regressions"))
		}
		fmt.Fprintf(ew, "\n<details%s>\n<summary><b>%s</b>: %s</summary>\n\n", open, htmlEscape(s.Name), status)
		if len(s.Metrics) > 0 {
			fmt.Fprintf(ew, "| %s |\n|---|---|--:|%s\n", strings.Join(header, " | "), strings.Repeat("--:|--:|---|--:|---|", len(m.Targets)-1))
		}
		for _, mm := range s.Metrics {
			for _, row := range mm.Rows {
				fmt.Fprintf(ew, "| `%s` | %s |\n", mm.Name, strings.Join(tableRow(mm.Name, row, mdVerdict)[1:], " | "))
			}
		}
		empty, warns := m.scenarioNotes(s.Name)
		if len(empty) > 0 {
			fmt.Fprintf(ew, "\nNo events: `%s`\n", strings.Join(empty, "`, `"))
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
	return ew.err
}

// mdVerdict is a verdict as the Markdown table shows it, coloured.
func mdVerdict(v Verdict) string {
	switch v.Kind {
	case Regression:
		return "🔴 **regression**"
	case Improvement:
		return "🟢 improvement"
	case Inconclusive:
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
func hasEvidence(r *Report, scenario string) bool {
	for _, e := range r.RegressionEvidence() {
		if e.Scenario == scenario {
			return true
		}
	}
	return false
}

var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscape(s string) string { return htmlReplacer.Replace(s) }
