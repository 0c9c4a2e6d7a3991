package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
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
		if line := detectionLine(p.r.Detections()); line != "" {
			fmt.Fprintf(ew, "%s%s.\n\n", mdEscape(p.prefix()), mdEscape(line))
		}
	}
	var sides []string
	for i := range m.Targets {
		sides = append(sides, m.role(i)+": "+mdEscape(m.describe(i)))
	}
	fmt.Fprintf(ew, "%s\n", capitalize(strings.Join(sides, " · ")))
	for _, p := range ps {
		if line := differenceLine(p.r); line != "" {
			fmt.Fprintf(ew, "\n%sWhat differs: %s.\n", mdEscape(p.prefix()), mdEscape(line))
		}
	}
	if warns := m.warnings(); len(warns) > 0 {
		fmt.Fprintf(ew, "\n")
		for _, warn := range warns {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdEscape(warn))
		}
	}
	writeTrendsMarkdown(ew, m.Trends)
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
				cells := tableRow(mm.Name, row, mdVerdict)[1:]
				cells[0] = mdEscape(cells[0]) // the percentile, as the Result names it
				fmt.Fprintf(ew, "| %s | %s |\n", mdCode(mm.Name), strings.Join(cells, " | "))
			}
		}
		empty, warns := m.scenarioNotes(s.Name)
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

// oneLine returns s with every character that would end its line or hide
// text written out as a Go escape such as \n or \u202e (plaintext.Line).
// Names, kernel releases and warnings come from Result files and guests:
// each must stay one visible line of what it says, in a table cell, a
// list item or an annotation.
func oneLine(s string) string { return plaintext.Line(s) }

// mdReplacer escapes what Markdown, GitHub's tables and inline HTML would
// read as markup: a pipe ends a cell, brackets make links and images,
// backticks code, and < or & HTML.
var mdReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "~", `\~`)

// mdEscape is s as one line of literal Markdown text. Every field of a
// Markdown report that comes from a Result file or a guest goes through
// it (or mdCode, htmlEscape, which share oneLine).
func mdEscape(s string) string { return mdReplacer.Replace(oneLine(s)) }

// mdCode is s as a code span: fenced with one backtick more than its
// longest run of them, so that none in s ends it, and with pipes escaped,
// as GitHub's tables want even inside code.
func mdCode(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", `\|`)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// htmlEscape is s as one line of text inside an HTML element, where
// Markdown escapes are not read.
func htmlEscape(s string) string { return htmlReplacer.Replace(oneLine(s)) }
