package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/report/stats/draw"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// defaultThreshold gates every percentile but max at its customary
// threshold.
func defaultThreshold(p Percentile) (float64, bool) {
	return ResolveThreshold("", p.Name, map[string]map[string]float64{"*": DefaultThresholds}, nil)
}

// The tree-splitting resample must agree with the direct one: every bucket
// weighted by its own Poisson draw.
func TestResampleMatchesDirectPoisson(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	trials := statstest.Synthetic{Median: 20000, Sigma: 0.6, Scale: 1}.Trials(r, 3, 5000, 0.02)
	s := newSide(trials)
	const q, n = 0.99, 4000
	sc := s.newScratch(q)
	var tree, direct []float64
	counts := make([]uint64, hist.Buckets)
	for range n {
		tree = append(tree, s.resample(r, q, sc))
		clear(counts)
		var total uint64
		for range trials {
			h := trials[r.IntN(len(trials))]
			for i, c := range h.Counts() {
				if c > 0 {
					w := draw.Poisson(r, float64(c))
					counts[i] += w
					total += w
				}
			}
		}
		direct = append(direct, hist.QuantileOfCounts(counts, total, q))
	}
	mt, st := meanSD(tree)
	md, sd := meanSD(direct)
	if math.Abs(mt-md) > 0.1*sd || math.Abs(st-sd) > 0.1*sd {
		t.Errorf("tree resample mean %g sd %g, direct mean %g sd %g", mt, st, md, sd)
	}
}

// The bracket only speeds the search up: a bracket that misses the
// quantile (here one far below it, and one far above) gives replicates of
// the same distribution.
func TestResampleBracketIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	trials := statstest.Synthetic{Median: 20000, Sigma: 0.6, Scale: 1}.Trials(r, 4, 3000, 0.05)
	s := newSide(trials)
	const q, n = 0.9, 4000
	draw := func(lo, hi int) []float64 {
		sc := s.newScratch(q)
		if hi > 0 {
			sc.lo, sc.hi = lo, hi
		}
		var out []float64
		for range n {
			out = append(out, s.resample(r, q, sc))
		}
		return out
	}
	mb, sb := meanSD(draw(0, 0))
	u := len(s.idx)
	for _, br := range [][2]int{{0, 3}, {u - 3, u}} {
		m, sd := meanSD(draw(br[0], br[1]))
		if math.Abs(m-mb) > 0.1*sb || math.Abs(sd-sb) > 0.1*sb {
			t.Errorf("bracket %v: mean %g sd %g, with the trials' bracket mean %g sd %g", br, m, sd, mb, sb)
		}
	}
}

func meanSD(x []float64) (float64, float64) {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	n := float64(len(x))
	return s / n, math.Sqrt(s2/n - (s/n)*(s/n))
}

func TestCompareMetricDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d := statstest.Synthetic{Median: 20000, Sigma: 0.6, Scale: 1}
	base := d.Trials(r, 5, 50000, 0.03)
	cand := d.Trials(r, 5, 50000, 0.03)
	a := CompareMetric("m", base, cand, defaultThreshold, 0)
	b := CompareMetric("m", base, cand, defaultThreshold, 0)
	for i := range a {
		if a[i].Lo != b[i].Lo || a[i].Hi != b[i].Hi {
			t.Errorf("%s: CI differs between runs: %v %v", a[i].Quantile, a[i], b[i])
		}
		if !(a[i].Lo <= a[i].Ratio*1.02 && a[i].Ratio <= a[i].Hi*1.02) {
			t.Errorf("%s: ratio %g far outside CI [%g, %g]", a[i].Quantile, a[i].Ratio, a[i].Lo, a[i].Hi)
		}
	}
	c := CompareMetric("other", base, cand, defaultThreshold, 0)
	if c[2].Lo == a[2].Lo && c[2].Hi == a[2].Hi {
		t.Errorf("metric name does not enter the seed")
	}
}

func BenchmarkCompare(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	d := statstest.Synthetic{Median: 20000, Sigma: 0.6, Scale: 1}
	base := d.Trials(r, 5, 50000, 0.03)
	cand := d.Trials(r, 5, 50000, 0.03)
	b.ReportAllocs()
	for b.Loop() {
		CompareMetric("syscall.read", base, cand, defaultThreshold, 0)
	}
}
