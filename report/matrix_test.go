package report

import (
	"math"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

func sampleMatrix(t *testing.T) *Matrix {
	t.Helper()
	base := statstest.Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	slow := base
	slow.Scale = 1.4
	slowResult := statstest.Result("slow", "6.1.0-57-amd64", slow, 5, 3)
	slowResult.Target.Sysctls = []result.Sysctl{{Key: "vm.swappiness", Set: "10", Read: "10"}}
	m, err := CompareMatrix([]MatrixTarget{
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
var sampleMatrixOptions = Options{Resamples: 400, Thresholds: []stats.Threshold{{Percentile: "p90", Value: 0.10}}}

// The matrix estimates each pair as Compare does, interval for interval,
// and judges the gated tests of all pairs as one family: the verdicts are
// Holm's over the union of the pairs' tests.
func TestMatrixVerdictsAreCompare(t *testing.T) {
	m := sampleMatrix(t)
	var family []*stats.Verdict
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
			family = append(family, stats.GatedOf(rep.Scenarios[si].Verdicts)...)
		}
	}
	stats.JudgeFamily(family, stats.DefaultAlpha, stats.DefaultBeta)
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
	if k := m.Scenarios[0].Metrics[1].Rows[2].Cells[2].Verdict.Kind; k != stats.Regression {
		t.Errorf("40%% slower target at p99: %s, want regression", k)
	}
	if k := m.Scenarios[0].Metrics[1].Rows[2].Cells[1].Verdict.Kind; k != stats.NoChange {
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

// A cell's interval is the side's share of its comparison's: the pair's
// ratio interval pools the two sides' variances (the larger of the two,
// twice), so on the log scale its half-width lies between the root of the
// cells' squared half-widths and √2 times the wider (less bootstrap
// noise: each side is resampled with its own seed).
func TestMatrixCellIntervalsAreCompares(t *testing.T) {
	m := sampleMatrix(t)
	for _, mm := range m.Scenarios[0].Metrics {
		for _, row := range mm.Rows {
			if row.Quantile == "max" {
				continue
			}
			ref, c := row.Cells[0], row.Cells[1]
			half := func(lo, hi float64) float64 { return math.Log(hi/lo) / 2 }
			hr, hc := half(ref.Lo, ref.Hi), half(c.Lo, c.Hi)
			v := c.Verdict
			hv := half(v.Lo, v.Hi)
			lo, hi := 0.85*math.Hypot(hr, hc), 1.15*math.Sqrt2*math.Max(hr, hc)
			if !(lo <= hv && hv <= hi) {
				t.Errorf("%s %s: ratio half-width %.4f, cells' %.4f and %.4f: want it in [%.4f, %.4f]", mm.Name, row.Quantile, hv, hr, hc, lo, hi)
			}
		}
	}
}
