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

// Write renders r in format f.
func Write(w io.Writer, r *Report, f Format) error {
	switch f {
	case Text:
		return WriteText(w, r)
	case Markdown:
		return WriteMarkdown(w, r)
	case JSON:
		return WriteJSON(w, r)
	case JUnit:
		return WriteJUnit(w, r)
	case GitHub:
		return WriteGitHub(w, r)
	case HTML:
		return WriteHTML(w, r)
	}
	return fmt.Errorf("unknown format %q", f)
}

// pairing is one comparison as a renderer lays it out: its Report and, in
// a matrix, the names of its target and of the reference. A two-target
// report is the case of one pairing with no names: renderers that take
// pairings (junit, github) have one code path for both.
type pairing struct {
	target, ref string // "" for a two-target report
	r           *Report
}

// pairings of a two-target report: the one comparison.
func reportPairings(r *Report) []pairing { return []pairing{{r: r}} }

// pairings of a matrix: each target after the reference with it.
func (m *Matrix) pairings() []pairing {
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

// scenario returns r's report of the named scenario, or nil.
func (r *Report) scenario(name string) *ScenarioReport {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}
