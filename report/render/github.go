package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// writeGitHub writes the pairings as GitHub Actions workflow commands: an
// ::error annotation per regression, a ::warning per inconclusive verdict,
// a ::notice per report-wide warning, and the headlines last as notices,
// so that the run's page shows what the gate decided next to the failed
// step. In a matrix each names the target and the reference. Verdicts are
// taken as they are; nothing is recomputed.
func writeGitHub(w io.Writer, ps []pairing) error {
	ew := &errWriter{w: w}
	for _, p := range ps {
		for _, warn := range p.r.Warnings {
			workflowCommand(ew, "notice", "tailgate", oneLine(p.warning(warn)))
		}
	}
	for _, name := range scenarioNames(ps) {
		for _, p := range ps {
			s := p.r.Scenario(name)
			if s == nil {
				continue
			}
			for _, v := range s.Verdicts {
				if cmd, title, msg, ok := annotation(p, name, v); ok {
					workflowCommand(ew, cmd, title, msg)
				}
			}
		}
	}
	for _, p := range ps {
		workflowCommand(ew, "notice", "tailgate", oneLine(p.headline()))
	}
	return ew.err
}

// annotation is the workflow command of one verdict: an error for a
// regression, a warning for an inconclusive verdict, none (ok false)
// otherwise.
func annotation(p pairing, scenario string, v stats.Verdict) (cmd, title, msg string, ok bool) {
	var what string
	switch v.Kind {
	case stats.Regression:
		cmd, what = "error", "regression"
	case stats.Inconclusive:
		cmd, what = "warning", "inconclusive"
	default:
		return "", "", "", false
	}
	target := ""
	if p.target != "" {
		target = p.target + " "
	}
	// Names come from Result files: each stays on its line (oneLine), and
	// only the warnings below start lines of their own.
	title = oneLine(fmt.Sprintf("tailgate: %s%s %s %s %s", target, scenario, v.Metric, v.Quantile, what))
	base, cand := report.VerdictValues(v)
	msg = fmt.Sprintf("%s%s %s %s: %s → %s (%s, %s, threshold %s)",
		p.prefix(), scenario, v.Metric, v.Quantile, FormatNs(base), FormatNs(cand),
		FormatDelta(v.Ratio), ciPhrase(v), thresholdLabel(v))
	if v.Kind == stats.Inconclusive {
		msg += ": " + verdictLabel(v)
	}
	msg = oneLine(msg)
	for _, warn := range v.Warnings {
		msg += "\n" + oneLine(WarningText(warn))
	}
	return cmd, title, msg, true
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
