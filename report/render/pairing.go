package render

import (
	"fmt"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// pairing is one comparison as a renderer lays it out: its Report and, in
// a matrix, the names of its target and of the reference. A two-target
// report is the case of one pairing with no names.
type pairing struct {
	target, ref string // "" for a two-target report
	r           *report.Report
}

// pairings of a matrix: each target after the reference with it.
func pairings(m *report.Matrix) []pairing {
	if m.TwoSided {
		return []pairing{{r: m.Pairs[0]}}
	}
	var out []pairing
	for i, r := range m.Pairs {
		out = append(out, pairing{target: m.Targets[i+1].Name, ref: m.Targets[0].Name, r: r})
	}
	return out
}

// prefix names the comparison at the head of a line that may stand
// beside those of other targets: "slow vs generic: ", or nothing in a
// two-target report.
func (p pairing) prefix() string {
	if p.target == "" {
		return ""
	}
	return p.target + " vs " + p.ref + ": "
}

// warning words a report-wide warning of the pairing, naming its two
// sides in a matrix (see warningText).
func (p pairing) warning(w stats.Warning) string {
	if p.target == "" {
		return WarningText(w)
	}
	return p.prefix() + warningText(w, p.ref, p.target)
}

// headline is the pairing's headline, named in a matrix.
func (p pairing) headline() string { return p.prefix() + headline(p.r) }

// scenarioNames lists the scenarios of the pairings in the order they
// first appear.
func scenarioNames(ps []pairing) []string {
	var out []string
	for _, p := range ps {
		for _, s := range p.r.Scenarios {
			if !slices.Contains(out, s.Name) {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// warnings words the report-wide warnings of every pairing of m.
func warnings(m *report.Matrix) []string {
	var out []string
	for _, p := range pairings(m) {
		for _, w := range p.r.Warnings {
			out = append(out, p.warning(w))
		}
	}
	return out
}

// scenarioNotes words what the pairings warn of in a scenario: the
// metrics without events in every pairing, for one line, and each other
// warning of the scenario and of its verdicts, the latter after the metric
// and percentile they concern.
func scenarioNotes(m *report.Matrix, name string) (noEvents, warns []string) {
	noEvents, warns, _ = scenarioNotesOf(m, name, false)
	return noEvents, warns
}

// scenarioNotesOf is scenarioNotes; gatedOnly leaves out, and counts in
// hidden, the warnings of verdicts that are not gated and those about a
// metric whose verdicts none are.
func scenarioNotesOf(m *report.Matrix, name string, gatedOnly bool) (noEvents, warns []string, hidden int) {
	ps := pairings(m)
	empty := map[string]int{} // pairings in which a metric has no events
	for _, p := range ps {
		if s := p.r.Scenario(name); s != nil {
			for _, w := range s.Warnings {
				if w.Kind == stats.WarnMetricNoEvents {
					if empty[w.Metric]++; empty[w.Metric] == len(ps) {
						noEvents = append(noEvents, w.Metric)
					}
				}
			}
		}
	}
	for _, p := range ps {
		s := p.r.Scenario(name)
		if s == nil {
			continue
		}
		ungated := map[string]bool{} // metrics with verdicts, none gated
		for _, v := range s.Verdicts {
			if g, seen := ungated[v.Metric]; !seen || g {
				ungated[v.Metric] = !v.Gated
			}
		}
		for _, w := range s.Warnings {
			if w.Kind != stats.WarnMetricNoEvents || empty[w.Metric] < len(ps) {
				if gatedOnly && ungated[w.Metric] {
					hidden++
					continue
				}
				warns = append(warns, p.warning(w))
			}
		}
		for _, v := range s.Verdicts {
			for _, w := range v.Warnings {
				if gatedOnly && !v.Gated {
					hidden++
					continue
				}
				warns = append(warns, p.prefix()+v.Metric+" "+v.Quantile+": "+WarningText(w))
			}
		}
	}
	return noEvents, warns, hidden
}

// headlines is one line per target of m: its comparison's headline.
func headlines(m *report.Matrix) []string {
	var out []string
	for _, p := range pairings(m) {
		out = append(out, p.headline())
	}
	return out
}

// Failures says why m fails the gate (report.Matrix.Failed), a line each: the
// regressions' headlines, or with strict the count of inconclusive
// verdicts. For standard error, where the report may not be.
func Failures(m *report.Matrix, strict bool) []string {
	if !m.Failed(strict) {
		return nil
	}
	c := m.Tally()
	if c.Regressions > 0 {
		return headlines(m)
	}
	return []string{fmt.Sprintf("%d inconclusive %s fail --strict", c.Inconclusive, english.Plural(c.Inconclusive, "verdict", "verdicts"))}
}
