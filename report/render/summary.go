package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// headline is the one-sentence outcome that leads every rendering:
// "2 regressions in 14 gated percentiles" or "No regressions in 14 gated
// percentiles", with improvements and inconclusive verdicts in brackets.
func headline(r *report.Report) string {
	c := r.Tally()
	var b strings.Builder
	switch c.Regressions {
	case 0:
		b.WriteString("No regressions")
	case 1:
		b.WriteString("1 regression")
	default:
		fmt.Fprintf(&b, "%d regressions", c.Regressions)
	}
	fmt.Fprintf(&b, " in %d gated %s", c.Gated, english.Plural(c.Gated, "percentile", "percentiles"))
	var extra []string
	if c.Inconclusive > 0 {
		extra = append(extra, fmt.Sprintf("%d inconclusive", c.Inconclusive))
	}
	if c.Improvements > 0 {
		extra = append(extra, fmt.Sprintf("%d %s", c.Improvements, english.Plural(c.Improvements, "improvement", "improvements")))
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	b.WriteString(".")
	return b.String()
}

// verdictLabel is a verdict as the tables show it.
func verdictLabel(v stats.Verdict) string {
	switch v.Kind {
	case stats.Inconclusive:
		// A direction only where the data lean one way: past the
		// threshold, or a change confirmed that may be past it. Inside the
		// threshold it waits for a narrower interval, not for a direction.
		dir := ""
		leans := v.Ratio > 1+v.Threshold || v.Ratio < 1-v.Threshold || (v.Level > 0 && v.P <= v.Level)
		switch {
		case !leans && v.TrialsToSettle > 0:
			dir = "no change?"
		case leans && v.Ratio > 1:
			dir = "slower?"
		case leans && v.Ratio < 1:
			dir = "faster?"
		}
		s := "inconclusive"
		if dir != "" {
			s += " (" + dir
			switch {
			case v.TrialsToSettle >= stats.MaxTrialsToSettle:
				s += fmt.Sprintf(" >%d trials", stats.MaxTrialsToSettle)
			case v.TrialsToSettle > 0:
				s += fmt.Sprintf(" ~%d %s", v.TrialsToSettle, english.Plural(v.TrialsToSettle, "trial", "trials"))
			}
			s += ")"
		}
		return s
	case stats.Regression:
		return "REGRESSION"
	}
	return string(v.Kind)
}

func thresholdLabel(v stats.Verdict) string {
	if !v.Gated {
		return "-"
	}
	return "±" + FormatPercent(v.Threshold)
}

// ciLabel is v's 95% interval as a report shows it, or, where so few
// rounds (or trials) bound it on neither side ([-100%, -]), how many
// there were.
func ciLabel(v stats.Verdict) string {
	if v.Lo > 0 && !math.IsInf(v.Hi, 0) || math.IsNaN(v.Lo) || math.IsNaN(v.Hi) {
		return FormatCI(v.Lo, v.Hi)
	}
	if v.Rounds > 0 {
		return fmt.Sprintf("too few rounds (%d)", v.Rounds)
	}
	return fmt.Sprintf("too few trials (%d)", min(v.BaseTrials, v.CandTrials))
}

// ciPhrase is ciLabel inside a sentence: "95% CI [+2.1%, +9.8%]", or
// "95% CI: too few rounds (3)".
func ciPhrase(v stats.Verdict) string {
	if l := ciLabel(v); strings.HasPrefix(l, "too few") {
		return "95% CI: " + l
	}
	return "95% CI " + ciLabel(v)
}

// role names target i's part: baseline and candidate in a report,
// reference and target in a matrix.
func role(m *report.Matrix, i int) string {
	switch {
	case m.TwoSided && i == 0:
		return "baseline"
	case m.TwoSided:
		return "candidate"
	case i == 0:
		return "reference"
	}
	return "target"
}

// column heads target i's values in a table: its role in a report, its
// name in a matrix.
func column(m *report.Matrix, i int) string {
	switch {
	case m.TwoSided:
		return role(m, i)
	case i == 0:
		return m.Targets[0].Name + " (ref)"
	}
	return m.Targets[i].Name
}

// describe is target i's line under the headline: its name, what sets it
// apart, its kernel and, when its Result says, its trials.
func describe(m *report.Matrix, i int) string {
	t := m.Targets[i]
	side := m.Pairs[max(i-1, 0)].Cand
	if i == 0 {
		side = m.Pairs[0].Base
	}
	d := t.Name
	if t.Description != "" {
		d += " (" + t.Description + ")"
	}
	if side.KernelRelease != "" {
		d += ", kernel " + side.KernelRelease
	}
	if side.Accel != "" {
		d += ", " + side.Accel
	}
	if side.Virtual {
		d += " in virtual time"
	}
	trials := 0
	if t.Result != nil {
		for _, s := range t.Result.Scenarios {
			trials = max(trials, s.Trials)
		}
	}
	if trials > 0 {
		d += fmt.Sprintf(", %d %s", trials, english.Plural(trials, "trial", "trials"))
	}
	return d
}

// differenceLine is the "what differs" line of a comparison of two runs:
// each difference, or the words that say there is none; "" for a report
// built without its Results.
func differenceLine(r *report.Report) string {
	if r.BaseResult == nil || r.CandResult == nil {
		return ""
	}
	ds := report.Differences(r.BaseResult, r.CandResult)
	if len(ds) == 0 {
		return "nothing recorded (kernel, sysctls, programs): an A/A comparison"
	}
	var parts []string
	for _, d := range ds {
		b, c := d.Base, d.Cand
		if d.Digest {
			b, c = report.ShortDigest(b), report.ShortDigest(c)
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", d.What, b, c))
	}
	return strings.Join(parts, "; ")
}

// shortDigests is ds with each digest shortened for a reader
// (report.ShortDigest).
func shortDigests(ds []report.Differing) []report.Differing {
	out := make([]report.Differing, len(ds))
	for i, d := range ds {
		out[i] = d
		if d.Digest {
			out[i].Values = make([]string, len(d.Values))
			for j, v := range d.Values {
				out[i].Values[j] = report.ShortDigest(v)
			}
		}
	}
	return out
}
