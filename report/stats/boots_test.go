package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// bruteRankSum enumerates every choice of len(y) of the values as the
// candidate's and returns P(S ≥ obs) and P(S ≤ obs) of the doubled
// mid-rank sum.
func bruteRankSum(x, y []float64) (up, down float64) {
	all := append(append([]float64(nil), x...), y...)
	r := doubledMidRanks(all)
	obs := 0
	for i := len(x); i < len(all); i++ {
		obs += r[i]
	}
	N, n := len(all), len(y)
	var total, nUp, nDown float64
	for mask := 0; mask < 1<<N; mask++ {
		if popcount(mask) != n {
			continue
		}
		s := 0
		for i := range N {
			if mask&(1<<i) != 0 {
				s += r[i]
			}
		}
		total++
		if s >= obs {
			nUp++
		}
		if s <= obs {
			nDown++
		}
	}
	return nUp / total, nDown / total
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

// The rank-sum p-values are the enumeration's, ties and all.
func TestRankSumPIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		m, n := 1+r.IntN(7), 1+r.IntN(7)
		draw := func(k int) []float64 {
			out := make([]float64, k)
			for i := range out {
				out[i] = float64(r.IntN(4)) // many ties
			}
			return out
		}
		x, y := draw(m), draw(n)
		up, down := rankSumP(x, y)
		wu, wd := bruteRankSum(x, y)
		if math.Abs(up-wu) > 1e-12 || math.Abs(down-wd) > 1e-12 {
			t.Fatalf("trial %d x=%v y=%v: p = %g, %g, enumeration %g, %g", trial, x, y, up, down, wu, wd)
		}
	}
}

// The Mann-Whitney distribution is the enumeration's: a probability,
// its upper end 1/C(m+n, n).
func TestMannWhitneyTail(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {2, 3}, {4, 4}, {3, 6}, {6, 6}} {
		m, n := c[0], c[1]
		counts := make([]float64, m*n+1)
		var total float64
		all := m + n
		for mask := 0; mask < 1<<all; mask++ {
			if popcount(mask) != n {
				continue
			}
			u, seen := 0, 0 // candidates at the set bits, values = positions
			for i := range all {
				if mask&(1<<i) != 0 {
					u += i - seen
					seen++
				}
			}
			counts[u]++
			total++
		}
		tail := mannWhitneyTail(m, n)
		acc := 0.0
		for u := m * n; u >= 0; u-- {
			acc += counts[u] / total
			if math.Abs(tail[u]-acc) > 1e-12 {
				t.Fatalf("m=%d n=%d: P(U ≥ %d) = %g, enumeration %g", m, n, u, tail[u], acc)
			}
		}
		if want := 1 / binomial(m+n, n); math.Abs(tail[m*n]-want) > 1e-15 {
			t.Errorf("m=%d n=%d: P(U = mn) = %g, want %g", m, n, tail[m*n], want)
		}
	}
	if got := minBootsFor(0, 0.01); got != 5 {
		t.Errorf("minBootsFor(0, 0.01) = %d, want 5 (1/252)", got)
	}
	if got := minBootsFor(6, 0.01); got != 4 {
		t.Errorf("minBootsFor(6, 0.01) = %d, want 4 beside 6 (1/210; 3 is 1/84)", got)
	}
}

// bootMetric is a metric of k boots, each of events reads at exactly ns.
func bootMetric(k int, ns uint64) *Sample {
	m := &Sample{}
	for range k {
		h := hist.New()
		h.RecordN(ns, 10000)
		m.Trials = append(m.Trials, Trial{Histogram: h})
	}
	return m
}

// judgeBoots judges the p99 of base against cand at 2% as look k of 3
// even looks at the default rates.
func judgeBoots(base, cand *Sample, k int) Verdict {
	p99, _ := LookupPercentile("p99")
	vs := CompareBoots("m", base, cand, []Percentile{p99}, func(Percentile) (float64, bool) { return 0.02, true })
	seq := Sequential{Looks: 3, Even: true}
	JudgeFamily(GatedOf(vs), seq.AlphaAt(k), seq.BetaAt(k))
	return vs[0]
}

// Boots that repeat decide at ±2% with few boots: the same path is no
// change at 4 a side, a path 5% longer a regression at 6 (not at 4, where
// the rank-sum test cannot reach its share of the level), and a path one
// bucket longer is inconclusive: the bucket is the resolution.
func TestBootsDecideAtTwoPercent(t *testing.T) {
	const path = 4931
	if v := judgeBoots(bootMetric(4, path), bootMetric(4, path), 1); v.Kind != NoChange {
		t.Errorf("same path, 4 boots a side: %s [%g, %g], want no change", v.Kind, v.Lo, v.Hi)
	}
	slower := uint64(path * 105 / 100)
	if v := judgeBoots(bootMetric(4, path), bootMetric(4, slower), 1); v.Kind != Inconclusive {
		t.Errorf("+5%%, 4 boots a side: %s, want inconclusive (1/70 is above the look's level)", v.Kind)
	}
	if v := judgeBoots(bootMetric(6, path), bootMetric(6, slower), 2); v.Kind != Regression || v.Ratio < 1.03 {
		t.Errorf("+5%%, 6 boots a side: %s ratio %g, want a regression", v.Kind, v.Ratio)
	}
	lo, w := hist.Bounds(hist.Bucket(path))
	next := lo + w + 1 // the next bucket
	// Inside ±2% it cannot be called either way; past the resolution it
	// cannot be "no change": inconclusive is all that is left.
	if v := judgeBoots(bootMetric(6, path), bootMetric(6, next), 2); v.Kind != Inconclusive || v.Ratio >= 1.02 {
		t.Errorf("one bucket apart (%d, %d ns), 6 boots a side: %s at ×%.4g, want inconclusive: the resolution keeps it open", path, next, v.Kind, v.Ratio)
	}
}
