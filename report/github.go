package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteGitHub writes r as GitHub Actions workflow commands: an ::error
// annotation per regression, a ::warning per inconclusive verdict, a
// ::notice per report-wide warning, and the headline last as a notice, so
// that the run's page shows what the gate decided next to the failed step.
// Verdicts are taken as they are; nothing is recomputed.
func WriteGitHub(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	for _, warn := range r.Warnings {
		workflowCommand(ew, "notice", "tailgate", warn.String())
	}
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			var cmd, what string
			switch v.Kind {
			case Regression:
				cmd, what = "error", "regression"
			case Inconclusive:
				cmd, what = "warning", "inconclusive"
			default:
				continue
			}
			title := fmt.Sprintf("tailgate: %s %s %s %s", s.Name, v.Metric, v.Quantile, what)
			msg := fmt.Sprintf("%s %s %s: %s → %s (%s, 95%% CI %s, threshold %s)",
				s.Name, v.Metric, v.Quantile, FormatNs(v.Base), FormatNs(v.Cand),
				FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v))
			if v.Kind == Inconclusive {
				msg += ": " + verdictLabel(v)
			}
			for _, warn := range v.Warnings {
				msg += "\n" + warn.String()
			}
			workflowCommand(ew, cmd, title, msg)
		}
	}
	workflowCommand(ew, "notice", "tailgate", r.Headline())
	return ew.err
}

// workflowCommand writes one "::cmd title=T::message" line, escaped as the
// runner expects so that a newline or a colon cannot end the command early
// or start another.
func workflowCommand(w io.Writer, cmd, title, msg string) {
	fmt.Fprintf(w, "::%s title=%s::%s\n", cmd, escapeProperty(title), escapeData(msg))
}

var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

func escapeData(s string) string { return dataEscaper.Replace(s) }

func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
