package render

import (
	"bytes"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"strings"
	"testing"
)

func TestWriteGitHubEscapes(t *testing.T) {
	r := &report.Report{
		Warnings: []stats.Warning{{Kind: report.WarnPartial, Side: stats.Baseline, Detail: "100% emulated\nsecond line"}},
		Scenarios: []report.ScenarioReport{{
			Name: "a,b:c",
			Verdicts: []stats.Verdict{{
				Metric: "syscall.read", Quantile: "p99", Base: 1000, Cand: 2000, Ratio: 2, Lo: 1.8, Hi: 2.2,
				Threshold: 0.1, Gated: true, Kind: stats.Regression, Warnings: []stats.Warning{{Kind: report.WarnDefinitionUnreadable, Detail: "::error::injected"}},
			}},
		}},
	}
	var b bytes.Buffer
	if err := WriteReport(&b, r, FormatGitHub); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"::notice title=tailgate::the baseline run is partial (100%25 emulated\\nsecond line): trials are missing",
		"::error title=tailgate%3A a%2Cb%3Ac syscall.read p99 regression::a,b:c syscall.read p99: 1.00µs → 2.00µs (+100.0%25, 95%25 CI [+80.0%25, +120.0%25], threshold ±10%25)%0Ascenario definition unreadable (::error::injected); p99 of every metric gated",
		"::notice title=tailgate::1 regression in 1 gated percentile.",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, lines[i], want[i])
		}
	}
}
