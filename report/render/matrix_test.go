package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

func sampleMatrix(t *testing.T) *report.Matrix {
	t.Helper()
	base := statstest.Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	slow := base
	slow.Scale = 1.4
	slowResult := statstest.Result("slow", "6.1.0-57-amd64", slow, 5, 3)
	slowResult.Target.Sysctls = []result.Sysctl{{Key: "vm.swappiness", Set: "10", Read: "10"}}
	m, err := report.CompareMatrix([]report.MatrixTarget{
		{Name: "generic", Description: "debian:6.1-generic", Result: statstest.Result("generic", "6.1.0-57-amd64", base, 5, 1)},
		{Name: "generic-again", Description: "debian:6.1-generic", Result: statstest.Result("generic-again", "6.1.0-57-amd64", base, 5, 2)},
		{Name: "slow", Description: "vm.swappiness=10", Result: slowResult},
	}, sampleMatrixOptions)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sampleMatrixOptions gate p90 on top of the default p99 of every metric.
var sampleMatrixOptions = report.Options{Resamples: 400, Thresholds: []stats.Threshold{{Percentile: "p90", Value: 0.10}}}

func TestMatrixRenderers(t *testing.T) {
	m := sampleMatrix(t)
	var b bytes.Buffer
	// -v: every row, gated or not.
	if err := WriteText(&b, m, TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"slow vs generic: 4 regressions in 4 gated percentiles",
		"generic-again vs generic: No regressions",
		"reference: generic (debian:6.1-generic), kernel 6.1.0-57-amd64, 5 trials",
		"target:    slow (vm.swappiness=10), kernel 6.1.0-57-amd64, 5 trials",
		"| metric         | pctl  | generic (ref) | generic-again | delta | 95% CI           | threshold | verdict   | slow   | delta  | 95% CI",
		"REGRESSION",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// A row per percentile, every target's column group in it: the
	// reference, then each target's value, delta, interval, threshold
	// and verdict, as compare lays out its two sides.
	for _, p := range stats.Percentiles {
		if n := strings.Count(text, "| timer.lateness | "+p.Name+" "); n != 1 {
			t.Errorf("%d rows of timer.lateness %s, want 1:\n%s", n, p.Name, text)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "| timer.lateness | p99 ") {
			if f := strings.Split(l, "|"); len(f) != 15 || strings.TrimSpace(f[8]) != "no change" || strings.TrimSpace(f[13]) != "REGRESSION" {
				t.Errorf("p99 row: %d columns, verdicts %q and %q: %s", len(f)-2, f[8], f[13], l)
			}
		}
	}
	checkGolden(t, "matrix.text", b.Bytes())
	b.Reset()
	if err := WriteMatrix(&b, m, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "matrix.markdown", b.Bytes())
	if md := b.String(); !strings.Contains(md, "<summary><b>timer-1ms</b>: 4 regressions</summary>") || !strings.Contains(md, "🔴 **regression**") {
		t.Errorf("markdown:\n%s", md)
	}
	b.Reset()
	if err := WriteMatrix(&b, m, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc JSONMatrix
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Comparisons) != 2 || doc.Reference != "generic" || len(doc.Scenarios[0].Metrics) != 2 {
		t.Errorf("json: %d comparisons, reference %q, %d metrics", len(doc.Comparisons), doc.Reference, len(doc.Scenarios[0].Metrics))
	}
	for _, f := range Formats {
		b.Reset()
		if err := WriteMatrix(&b, m, f); err != nil || b.Len() == 0 {
			t.Errorf("%s: %d bytes, %v", f, b.Len(), err)
		}
	}
}
