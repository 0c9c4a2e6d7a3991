package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes r as GitHub-flavoured Markdown for a job summary or
// a pull-request comment: the headline first, then a collapsible section
// per scenario, open when it holds a regression.
func WriteMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s\n\n", r.Headline())
	if r.Run != nil {
		fmt.Fprintf(ew, "Base and head in one job: %s.\n\n", mdEscape(r.Run.String()))
	}
	fmt.Fprintf(ew, "Baseline: %s · candidate: %s\n", mdEscape(describeSide(r.Base)), mdEscape(describeSide(r.Cand)))
	if len(r.Warnings) > 0 {
		fmt.Fprintf(ew, "\n")
		for _, warn := range r.Warnings {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdEscape(warn.String()))
		}
	}
	for _, s := range r.Scenarios {
		var reg int
		for _, v := range s.Verdicts {
			if v.Kind == Regression {
				reg++
			}
		}
		open, status := "", "no regressions"
		if reg > 0 {
			open = " open"
			status = fmt.Sprintf("%d %s", reg, plural(reg, "regression", "regressions"))
		}
		fmt.Fprintf(ew, "\n<details%s>\n<summary><b>%s</b>: %s</summary>\n\n", open, htmlEscape(s.Name), status)
		fmt.Fprintf(ew, "| metric | pctl | baseline | candidate | delta | 95%% CI | threshold | verdict |\n")
		fmt.Fprintf(ew, "|---|---|--:|--:|--:|---|--:|---|\n")
		for _, v := range s.Verdicts {
			label := verdictLabel(v)
			switch v.Kind {
			case Regression:
				label = "🔴 **regression**"
			case Improvement:
				label = "🟢 improvement"
			case Inconclusive:
				label = "🟡 " + label
			}
			fmt.Fprintf(ew, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n",
				v.Metric, v.Quantile, FormatNs(v.Base), FormatNs(v.Cand),
				FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v), label)
		}
		if warns := verdictWarnings(s); len(warns) > 0 {
			fmt.Fprintf(ew, "\nWarnings:\n")
			for _, warn := range warns {
				fmt.Fprintf(ew, "- %s\n", mdEscape(warn))
			}
		}
		writeEvidenceMarkdown(ew, r, s.Name)
		fmt.Fprintf(ew, "\n</details>\n")
	}
	return ew.err
}

var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscape(s string) string { return htmlReplacer.Replace(s) }
