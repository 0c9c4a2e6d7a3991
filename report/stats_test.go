package report

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// defaultThreshold gates every percentile but max at its customary
// threshold.
func defaultThreshold(p Percentile) (float64, bool) {
	return ResolveThreshold("", p.Name, map[string]map[string]float64{"*": DefaultThresholds}, nil)
}

func TestPoissonBinomialMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.5, 3, 29, 31, 1000} {
		var s, s2 float64
		const n = 200000
		for range n {
			x := float64(poisson(r, lambda))
			s += x
			s2 += x * x
		}
		mean, vr := s/n, s2/n-(s/n)*(s/n)
		if math.Abs(mean-lambda) > 0.02*lambda+0.02 || math.Abs(vr-lambda) > 0.05*lambda+0.05 {
			t.Errorf("poisson(%g): mean %g var %g", lambda, mean, vr)
		}
	}
	for _, c := range []struct {
		n uint64
		p float64
	}{{10, 0.3}, {100, 0.01}, {1000, 0.02}, {1000, 0.5}, {50000, 0.999}, {7, 1}, {7, 0}} {
		var s, s2 float64
		const k = 100000
		for range k {
			x := float64(binomial(r, c.n, c.p))
			if x > float64(c.n) {
				t.Fatalf("binomial(%d,%g) = %g > n", c.n, c.p, x)
			}
			s += x
			s2 += x * x
		}
		mean, vr := s/k, s2/k-(s/k)*(s/k)
		wm, wv := float64(c.n)*c.p, float64(c.n)*c.p*(1-c.p)
		if math.Abs(mean-wm) > 0.02*wm+0.02 || math.Abs(vr-wv) > 0.06*wv+0.05 {
			t.Errorf("binomial(%d,%g): mean %g (want %g) var %g (want %g)", c.n, c.p, mean, wm, vr, wv)
		}
	}
}

// The tree-splitting resample must agree with the direct one: every bucket
// weighted by its own Poisson draw.
func TestResampleMatchesDirectPoisson(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	trials := synthetic{Median: 20000, Sigma: 0.6, Scale: 1}.trials(r, 3, 5000, 0.02)
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
					w := poisson(r, float64(c))
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
	trials := synthetic{Median: 20000, Sigma: 0.6, Scale: 1}.trials(r, 4, 3000, 0.05)
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
	d := synthetic{Median: 20000, Sigma: 0.6, Scale: 1}
	base := d.trials(r, 5, 50000, 0.03)
	cand := d.trials(r, 5, 50000, 0.03)
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
	d := synthetic{Median: 20000, Sigma: 0.6, Scale: 1}
	base := d.trials(r, 5, 50000, 0.03)
	cand := d.trials(r, 5, 50000, 0.03)
	b.ReportAllocs()
	for b.Loop() {
		CompareMetric("syscall.read", base, cand, defaultThreshold, 0)
	}
}
