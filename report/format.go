package report

import (
	"fmt"
	"io"
	"slices"
)

// Format names a rendering of a Report.
type Format string

// Formats.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	JSON     Format = "json"
	JUnit    Format = "junit"
	GitHub   Format = "github" // GitHub Actions workflow commands (annotations)
	HTML     Format = "html"   // one self-contained page with tail plots
)

// Formats lists the formats Write knows.
var Formats = []Format{Text, Markdown, JSON, JUnit, GitHub, HTML}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want text, markdown, json, junit, github or html)", s)
}

// Write renders r in format f, as the matrix of its two sides.
func Write(w io.Writer, r *Report, f Format) error { return WriteMatrix(w, r.Matrix(), f) }

// WriteMatrix renders m in format f: one renderer per format lays out a
// comparison of two targets and of N. The JSON of a Report's matrix is the
// compare document (docs/compare.schema.json), which a matrix's holds per
// pair.
func WriteMatrix(w io.Writer, m *Matrix, f Format) error {
	switch f {
	case Text:
		return writeText(w, m)
	case Markdown:
		return writeMarkdown(w, m)
	case JSON:
		if m.twoSided {
			return writeJSON(w, m.pairJSON(0))
		}
		return writeJSON(w, m.JSON())
	case JUnit:
		return writeJUnit(w, m.pairings())
	case GitHub:
		return writeGitHub(w, m.pairings())
	case HTML:
		return writeHTML(w, m)
	}
	return fmt.Errorf("unknown format %q", f)
}

// pairing is one comparison as a renderer lays it out: its Report and, in
// a matrix, the names of its target and of the reference. A two-target
// report is the case of one pairing with no names.
type pairing struct {
	target, ref string // "" for a two-target report
	r           *Report
}

// pairings of a matrix: each target after the reference with it.
func (m *Matrix) pairings() []pairing {
	if m.twoSided {
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
// sides in a matrix (see Warning.text).
func (p pairing) warning(w Warning) string {
	if p.target == "" {
		return w.String()
	}
	return p.prefix() + MatrixWarning{Target: p.target, Warning: w}.text(p.ref)
}

// headline is the pairing's headline, named in a matrix.
func (p pairing) headline() string { return p.prefix() + p.r.Headline() }

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

// warnings words the report-wide warnings of every pairing.
func (m *Matrix) warnings() []string {
	var out []string
	for _, p := range m.pairings() {
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
func (m *Matrix) scenarioNotes(name string) (noEvents, warns []string) {
	ps := m.pairings()
	empty := map[string]int{} // pairings in which a metric has no events
	for _, p := range ps {
		if s := p.r.scenario(name); s != nil {
			for _, w := range s.Warnings {
				if w.Kind == WarnMetricNoEvents {
					if empty[w.Metric]++; empty[w.Metric] == len(ps) {
						noEvents = append(noEvents, w.Metric)
					}
				}
			}
		}
	}
	for _, p := range ps {
		s := p.r.scenario(name)
		if s == nil {
			continue
		}
		for _, w := range s.Warnings {
			if w.Kind != WarnMetricNoEvents || empty[w.Metric] < len(ps) {
				warns = append(warns, p.warning(w))
			}
		}
		for _, v := range s.Verdicts {
			for _, w := range v.Warnings {
				warns = append(warns, p.prefix()+v.Metric+" "+v.Quantile+": "+w.String())
			}
		}
	}
	return noEvents, warns
}

// scenario returns r's report of the named scenario, or nil.
func (r *Report) scenario(name string) *ScenarioReport {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}
