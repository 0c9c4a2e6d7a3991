package render

import (
	"bytes"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
	"strings"
	"testing"
)

// TestHTMLNamesAndDifferences: two runs on one host are told apart in the
// plots by their role, what differs between the Results is tabled, and
// the per-trial plot shows the gated percentile, not a fixed p99.
func TestHTMLNamesAndDifferences(t *testing.T) {
	base := statstest.Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	a := statstest.Result("host", "6.1.0-57-amd64", base, 5, 1)
	b := statstest.Result("host", "6.12.9-amd64", base, 5, 2)
	b.Environment.Clocksource = "hpet"
	r, err := report.Compare(a, b, report.Options{Resamples: 200, Thresholds: []stats.Threshold{{Percentile: "p99.9", Value: 0.2}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, r, FormatHTML); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"baseline (host)", "candidate (host)", // in the plots
		`<table id="differences">`, "<th>kernel</th><td>6.1.0-57-amd64</td><td>6.12.9-amd64</td>",
		"<th>clock source</th>",
		"p99.9 per trial",
		"latency (log)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<th>CPU</th>") {
		t.Error("the CPU is the same on both sides but tabled as a difference")
	}
}
