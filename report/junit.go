package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// junitSuites is the JUnit XML that CI systems (GitLab, Jenkins, GitHub
// test reporters) read: a suite per scenario, a test case per gated metric
// and percentile, a failure per regression.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the pairings as JUnit XML: a suite per scenario, a
// test case per pairing, gated metric and percentile, in a matrix named
// for the target and the reference.
func writeJUnit(w io.Writer, ps []pairing) error {
	doc := junitSuites{Name: "tailgate"}
	for _, name := range scenarioNames(ps) {
		suite := junitSuite{Name: name}
		for _, p := range ps {
			s := p.r.scenario(name)
			if s == nil {
				continue
			}
			for _, v := range s.Verdicts {
				if !v.Gated {
					continue
				}
				c := junitCaseOf(p, name, v)
				if c.Failure != nil {
					suite.Failures++
				}
				suite.Cases = append(suite.Cases, c)
				suite.Tests++
			}
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
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

// junitCaseOf is the test case of one gated verdict: a failure when it
// is a regression, its numbers and warnings as output otherwise.
func junitCaseOf(p pairing, scenario string, v Verdict) junitCase {
	line := fmt.Sprintf("%s%s %s: %s → %s, %s (95%% CI %s), threshold %s: %s",
		p.prefix(), v.Metric, v.Quantile, FormatNs(v.Base), FormatNs(v.Cand),
		FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v), verdictLabel(v))
	c := junitCase{Name: p.prefix() + v.Metric + " " + v.Quantile, Classname: "tailgate." + scenario}
	detail := []string{line}
	for _, warn := range v.Warnings {
		detail = append(detail, "warning: "+warn.String())
	}
	if v.Kind == Regression {
		c.Failure = &junitFailure{Message: line, Type: "regression", Text: strings.Join(detail, "\n")}
	} else {
		c.SystemOut = strings.Join(detail, "\n")
	}
	return c
}
