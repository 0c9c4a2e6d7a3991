package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// junitSuites is the JUnit XML that CI systems (GitLab, Jenkins, GitHub
// test reporters) read: a suite per scenario, a test case per gated metric
// and percentile, a failure per regression, a skipped case per
// inconclusive verdict (a failure under --strict). It validates against
// the Jenkins xUnit plugin's junit-10.xsd, the strictest common schema:
// errors is required on a suite, times are decimal seconds.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnitOptions change what the JUnit report counts as a failure.
type JUnitOptions struct {
	// Strict makes an inconclusive verdict a failure rather than a skipped
	// case, as --strict makes it fail the gate: the failures then agree
	// with the exit code.
	Strict bool
}

// WriteJUnit writes m as JUnit XML (the JUnit format of WriteMatrix is
// WriteJUnit with no options).
func WriteJUnit(w io.Writer, m *report.Matrix, o JUnitOptions) error {
	return junitOf(w, pairings(m), o)
}

// writeJUnit is WriteMatrix's JUnit: no options.
func writeJUnit(w io.Writer, ps []pairing) error { return junitOf(w, ps, JUnitOptions{}) }

// junitOf writes the pairings as JUnit XML: a suite per scenario, a
// test case per pairing, gated metric and percentile, in a matrix named
// for the target and the reference. A suite's time is the seconds of the
// trials measured for it, both sides; a case's is 0, since every verdict
// of a scenario is read from the same trials.
func junitOf(w io.Writer, ps []pairing, o JUnitOptions) error {
	doc := junitSuites{Name: "tailgate"}
	total := 0.0
	for _, name := range scenarioNames(ps) {
		suite := junitSuite{Name: name}
		seconds := 0.0
		for _, p := range ps {
			s := p.r.Scenario(name)
			if s == nil {
				continue
			}
			seconds += trialSeconds(p.r.BaseResult, name) + trialSeconds(p.r.CandResult, name)
			for _, v := range s.Verdicts {
				if !v.Gated {
					continue
				}
				c := junitCaseOf(p, name, v, o)
				switch {
				case c.Failure != nil:
					suite.Failures++
				case c.Skipped != nil:
					suite.Skipped++
				}
				suite.Cases = append(suite.Cases, c)
				suite.Tests++
			}
		}
		suite.Time = junitTime(seconds)
		total += seconds
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
	doc.Time = junitTime(total)
	return writeJUnitDoc(w, doc)
}

// WriteJUnitError writes the JUnit XML of a command that could not judge
// (exit 3: the machinery failed): one suite with one case, in error, so
// that a CI test report shows the breakage instead of a missing file.
func WriteJUnitError(w io.Writer, command string, err error) error {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	c := junitCase{Name: "tailgate " + command, Classname: "tailgate", Time: junitTime(0),
		Error: &junitFailure{Message: first, Type: "infrastructure", Text: msg}}
	suite := junitSuite{Name: "tailgate " + command, Tests: 1, Errors: 1, Time: junitTime(0), Cases: []junitCase{c}}
	return writeJUnitDoc(w, junitSuites{Name: "tailgate", Tests: 1, Errors: 1, Time: junitTime(0), Suites: []junitSuite{suite}})
}

func writeJUnitDoc(w io.Writer, doc junitSuites) error {
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// junitTime is seconds as the schema's SUREFIRE_TIME wants them: plain
// decimal, no exponent.
func junitTime(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// trialSeconds is the seconds of r's trials of a scenario (its longest
// metric's, as every metric is traced over the same trials); 0 without r.
func trialSeconds(r *result.Result, scenario string) float64 {
	if r == nil {
		return 0
	}
	s := r.Find(scenario)
	if s == nil {
		return 0
	}
	most := 0.0
	for _, m := range s.Metrics {
		sum := 0.0
		for _, t := range m.Trials {
			sum += t.Duration
		}
		most = max(most, sum)
	}
	return most
}

// junitCaseOf is the test case of one gated verdict: a failure when it
// is a regression (or inconclusive under Strict), skipped when it is
// inconclusive, its numbers and warnings as output.
func junitCaseOf(p pairing, scenario string, v stats.Verdict, o JUnitOptions) junitCase {
	base, cand := report.VerdictValues(v)
	line := fmt.Sprintf("%s%s %s: %s → %s, %s (%s), threshold %s: %s",
		p.prefix(), v.Metric, v.Quantile, FormatNs(base), FormatNs(cand),
		FormatDelta(v.Ratio), ciPhrase(v), thresholdLabel(v), verdictLabel(v))
	c := junitCase{Name: p.prefix() + v.Metric + " " + v.Quantile, Classname: "tailgate." + scenario, Time: junitTime(0)}
	detail := []string{line}
	for _, warn := range v.Warnings {
		detail = append(detail, "warning: "+WarningText(warn))
	}
	text := strings.Join(detail, "\n")
	switch {
	case v.Kind == stats.Regression:
		c.Failure = &junitFailure{Message: line, Type: "regression", Text: text}
	case v.Kind == stats.Inconclusive && o.Strict:
		c.Failure = &junitFailure{Message: line, Type: "inconclusive", Text: text}
	case v.Kind == stats.Inconclusive:
		c.Skipped = &junitFailure{Message: line, Type: "inconclusive"}
		c.SystemOut = text
	default:
		c.SystemOut = text
	}
	return c
}
