package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// syntheticResult is a Result of one scenario, two metrics, trials drawn
// from s with the given seed.
func syntheticResult(target, kernel string, s synthetic, trials int, seed uint64) *result.Result {
	r := rand.New(rand.NewPCG(seed, 7))
	sc := result.Scenario{Name: "timer-1ms", Params: "p1", Trials: trials, Metrics: map[string]*result.Metric{}}
	for _, name := range []string{"timer.lateness", "sched.runq"} {
		m := &result.Metric{Unit: "ns"}
		ms := s
		if name == "sched.runq" {
			ms.Median /= 4
		}
		for _, h := range ms.trials(r, trials, 20000, 0.02) {
			m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h)})
		}
		sc.Metrics[name] = m
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(int64(seed), 0),
		Target:      result.Target{Name: target, Kind: "host"},
		Environment: result.Environment{KernelRelease: kernel, CPUModel: "test cpu", CPUs: 2},
		Scenarios:   []result.Scenario{sc},
	}
}

func sampleMatrix(t *testing.T) *Matrix {
	t.Helper()
	base := synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	slow := base
	slow.Scale = 1.4
	slowResult := syntheticResult("slow", "6.1.0-57-amd64", slow, 5, 3)
	slowResult.Target.Sysctls = []result.Sysctl{{Key: "vm.swappiness", Set: "10", Read: "10"}}
	m, err := CompareMatrix([]MatrixTarget{
		{Name: "generic", Description: "debian:6.1-generic", Result: syntheticResult("generic", "6.1.0-57-amd64", base, 5, 1)},
		{Name: "generic-again", Description: "debian:6.1-generic", Result: syntheticResult("generic-again", "6.1.0-57-amd64", base, 5, 2)},
		{Name: "slow", Description: "vm.swappiness=10", Result: slowResult},
	}, sampleMatrixOptions)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sampleMatrixOptions gate p90 on top of the default p99 of every metric.
var sampleMatrixOptions = Options{Resamples: 400, Thresholds: []Threshold{{Percentile: "p90", Value: 0.10}}}

// The matrix estimates each pair as Compare does, interval for interval,
// and judges the gated tests of all pairs as one family: the verdicts are
// Holm's over the union of the pairs' tests.
func TestMatrixVerdictsAreCompare(t *testing.T) {
	m := sampleMatrix(t)
	var family []*Verdict
	var alone []*Report
	for i, tg := range m.Targets[1:] {
		rep, err := Compare(m.Targets[0].Result, tg.Result, sampleMatrixOptions)
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, rep)
		if rep.Tests != 4 || m.Pairs[i].Tests != 8 {
			t.Errorf("%s: a family of %d alone and %d in the matrix, want 4 and 8", tg.Name, rep.Tests, m.Pairs[i].Tests)
		}
		for si := range rep.Scenarios {
			family = append(family, gatedOf(rep.Scenarios[si].Verdicts)...)
		}
	}
	judgeFamily(family, DefaultAlpha, DefaultBeta)
	for i, tg := range m.Targets[1:] {
		rep := alone[i]
		for _, s := range m.Scenarios {
			for _, mm := range s.Metrics {
				for _, row := range mm.Rows {
					got := row.Cells[i+1].Verdict
					want := rep.find(s.Name, mm.Name, row.Quantile)
					if got == nil || want == nil {
						t.Fatalf("%s %s %s %s: cell verdict %v, Compare's %v", tg.Name, s.Name, mm.Name, row.Quantile, got, want)
					}
					if got.Kind != want.Kind || got.Ratio != want.Ratio || got.Lo != want.Lo || got.Hi != want.Hi || got.P != want.P || got.Level != want.Level {
						t.Errorf("%s %s %s %s: cell verdict %+v, judged with the union %+v", tg.Name, s.Name, mm.Name, row.Quantile, got, want)
					}
				}
			}
		}
	}
	if k := m.Scenarios[0].Metrics[1].Rows[2].Cells[2].Verdict.Kind; k != Regression {
		t.Errorf("40%% slower target at p99: %s, want regression", k)
	}
	if k := m.Scenarios[0].Metrics[1].Rows[2].Cells[1].Verdict.Kind; k != NoChange {
		t.Errorf("same distribution at p99: %s, want no change", k)
	}
	if !m.Failed(false) {
		t.Error("matrix with a regression does not fail")
	}
}

// Each target's own interval brackets its value and is no wider than the
// spread of trials makes plausible.
func TestMatrixCellIntervals(t *testing.T) {
	m := sampleMatrix(t)
	for _, mm := range m.Scenarios[0].Metrics {
		for _, row := range mm.Rows {
			for ti, c := range row.Cells {
				if !c.Present || len(c.Trials) != 5 {
					t.Fatalf("%s %s target %d: present %v, %d trials", mm.Name, row.Quantile, ti, c.Present, len(c.Trials))
				}
				if row.Quantile == "max" {
					continue
				}
				if !(c.Lo <= c.Value*1.01 && c.Value <= c.Hi*1.01) || c.Hi/c.Lo > 1.5 {
					t.Errorf("%s %s target %d: %v not in [%v, %v] or interval too wide", mm.Name, row.Quantile, ti, c.Value, c.Lo, c.Hi)
				}
			}
		}
	}
}

func TestMatrixRenderers(t *testing.T) {
	m := sampleMatrix(t)
	var b bytes.Buffer
	if err := WriteMatrix(&b, m, Text); err != nil {
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
	for _, p := range Percentiles {
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
	if err := WriteMatrix(&b, m, Markdown); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "matrix.markdown", b.Bytes())
	if md := b.String(); !strings.Contains(md, "<summary><b>timer-1ms</b>: 4 regressions</summary>") || !strings.Contains(md, "🔴 **regression**") {
		t.Errorf("markdown:\n%s", md)
	}
	b.Reset()
	if err := WriteMatrix(&b, m, JSON); err != nil {
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
