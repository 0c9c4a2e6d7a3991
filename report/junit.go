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

// WriteJUnit writes r as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := junitSuites{Name: "tailgate"}
	for _, s := range r.Scenarios {
		suite := junitSuite{Name: s.Name}
		for _, v := range s.Verdicts {
			if !v.Gated {
				continue
			}
			line := fmt.Sprintf("%s %s: %s → %s, %s (95%% CI %s), threshold %s: %s",
				v.Metric, v.Quantile, FormatNs(v.Base), FormatNs(v.Cand),
				FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v), verdictLabel(v))
			c := junitCase{Name: v.Metric + " " + v.Quantile, Classname: "tailgate." + s.Name}
			var detail []string
			detail = append(detail, line)
			for _, warn := range v.Warnings {
				detail = append(detail, "warning: "+warn.String())
			}
			if v.Kind == Regression {
				c.Failure = &junitFailure{Message: line, Type: "regression", Text: strings.Join(detail, "\n")}
				suite.Failures++
			} else {
				c.SystemOut = strings.Join(detail, "\n")
			}
			suite.Cases = append(suite.Cases, c)
			suite.Tests++
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
