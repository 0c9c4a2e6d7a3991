package stats

import (
	"math"
	"slices"
	"sync"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// Boots in virtual time: the comparison of VM runs whose guest clock
// counts instructions (docs/statistics.md, "Boots in virtual time").
//
// There the host's load does not reach what a boot measures, and every
// boot of a kernel starts from the same state, so the boots of one side
// are exchangeable draws whatever order they ran in, within a run or
// across runs. Under "nothing changed" all the boots of both sides are
// then exchangeable, and the rank-sum test over every boot's log quantile
// is exact; pairing by round adds nothing, and costs: a signed-rank test
// over n rounds reaches no p-value below 2^-n, the rank-sum test over n
// boots a side reaches 1/C(2n, n) (4 rounds: 1/16 against 1/70).
//
// The estimate is the two-sample Hodges-Lehmann shift (the median of the
// differences between a candidate's and a baseline's log quantile), its
// bounds the differences at the rank-sum critical values. A boot's
// quantile is a bucket's midpoint, within half a bucket of the truth, so
// the bounds are widened by a bucket (bootResolution) on each side: a
// measurement that repeats to the bucket still knows the ratio only to
// the bucket.

// bootResolution is the log of a bucket's widest ratio, 1 + 1/Sub: the
// most two midpoints can misstate a ratio by.
var bootResolution = math.Log1p(1 / float64(hist.Sub))

// maxExactBoots bounds the boots (both sides) whose p-values are computed
// exactly; past it the normal approximation is as good.
const maxExactBoots = 60

// CompareBoots estimates every percentile of a metric from the trials of
// two sets of boots in virtual time, one trial a boot, compared as two
// exchangeable samples. The verdicts are not judged yet, as
// CompareTrials'.
func CompareBoots(metric string, base, cand *Sample, pcts []Percentile, threshold func(Percentile) (float64, bool)) []Verdict {
	var out []Verdict
	for _, p := range pcts {
		t, gated := threshold(p)
		e, rd := bootEstimate(base, cand, p.Q)
		v := newVerdict(metric, p, e, t, gated, len(base.Trials), len(cand.Trials))
		v.ranks, v.pUp, v.pDown = rd, e.PUp, e.PDown
		out = append(out, v)
	}
	return out
}

// bootEstimate is the comparison of one metric at quantile q over each
// side's boots: the ratio exp(shift), the 95% interval widened by the
// resolution, the exact one-sided p-values.
func bootEstimate(base, cand *Sample, q float64) (Estimate, *rankData) {
	bm, cm := base.Merged(), cand.Merged()
	e := Estimate{
		BaseEvents: bm.Count(), CandEvents: cm.Count(),
		BaseTrials: len(base.Trials), CandTrials: len(cand.Trials),
		BaseVar: math.NaN(), CandVar: math.NaN(),
		SE: math.NaN(), DF: math.NaN(), Lo: math.NaN(), Hi: math.NaN(),
		Ratio: math.NaN(), Ranked: true, PUp: 1, PDown: 1,
	}
	e.Base = medianTrialQuantile(base, q)
	e.Cand = medianTrialQuantile(cand, q)
	x, y := logTrialQuantiles(base, q), logTrialQuantiles(cand, q)
	if len(x) == 0 || len(y) == 0 {
		return e, nil
	}
	rd := newTwoSample(x, y)
	e.Ratio = math.Exp(rd.centre())
	lo, hi := rd.lower(0.025)-rd.resolution, rd.upper(0.025)+rd.resolution
	e.Lo, e.Hi = math.Exp(lo), math.Exp(hi)
	e.DF = float64(min(len(x), len(y)) - 1)
	if !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
		e.SE = (hi - lo) / (2 * 1.96)
	}
	e.PUp, e.PDown = rankSumP(x, y)
	return e, rd
}

// logTrialQuantiles returns the log q-quantile of each trial with events.
func logTrialQuantiles(m *Sample, q float64) []float64 {
	var out []float64
	for _, t := range m.Trials {
		if t.Histogram == nil || t.Histogram.Count() == 0 {
			continue
		}
		if v := t.Histogram.Quantile(q); v > 0 {
			out = append(out, math.Log(v))
		}
	}
	return out
}

// newTwoSample prepares the differences y_j − x_i, sorted, and the null
// distribution of the Mann-Whitney count of positive differences.
func newTwoSample(x, y []float64) *rankData {
	d := make([]float64, 0, len(x)*len(y))
	for _, b := range x {
		for _, c := range y {
			d = append(d, c-b)
		}
	}
	slices.Sort(d)
	m, n := len(x), len(y)
	return &rankData{
		values: d, tail: mannWhitneyTail(m, n), resolution: bootResolution,
		count: n, minFor: func(a float64) int { return minBootsFor(m, a) }, boots: true,
	}
}

// minBootsFor is the fewest candidate boots beside m of the baseline at
// which the rank-sum test can reach one-sided level a at all: the sides
// apart, chance 1/C(m+n, n); m = 0 asks it of equal sides.
func minBootsFor(m int, a float64) int {
	if !(a > 0) {
		return math.MaxInt32
	}
	for n := 1; n < 64; n++ {
		if 1/binomial(max(m, n)+n, n) <= a {
			return n
		}
	}
	return math.MaxInt32
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// mannWhitneyTail returns tail[u] = P(U ≥ u) for u = 0..mn, U the count of
// positive differences between n candidate and m baseline values without
// ties, every split of the m+n equally likely. Exact up to maxExactBoots,
// the normal approximation past it. Cached per (m, n).
func mannWhitneyTail(m, n int) []float64 {
	key := [2]int{m, n}
	if t, ok := mwCache.Load(key); ok {
		return t.([]float64)
	}
	var pmf []float64
	if m+n <= maxExactBoots {
		pmf = mannWhitneyPMF(m, n)
	} else {
		pmf = normalPMF(m*n, float64(m*n)/2, math.Sqrt(float64(m*n*(m+n+1))/12))
	}
	tail := make([]float64, len(pmf)+1)
	for u := len(pmf) - 1; u >= 0; u-- {
		tail[u] = tail[u+1] + pmf[u]
	}
	tail = tail[:len(pmf)]
	mwCache.Store(key, tail)
	return tail
}

var mwCache sync.Map // [2]int → []float64

// mannWhitneyPMF is P(U = u) by the recursion on the largest value: it is
// a candidate's (chance n/(m+n), adding m to U) or a baseline's.
func mannWhitneyPMF(m, n int) []float64 {
	// prev[j] is the distribution for (i−1, j), cur[j] for (i, j).
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1} // i = 0: U = 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			p := make([]float64, i*j+1)
			wc := float64(j) / float64(i+j)
			for u, v := range cur[j-1] { // the largest is a candidate's: above all i baselines
				p[u+i] += wc * v
			}
			for u, v := range prev[j] {
				p[u] += (1 - wc) * v
			}
			cur[j] = p
		}
		prev = cur
	}
	return prev[n]
}

// normalPMF spreads a normal(mu, sd) over the integers 0..max.
func normalPMF(max int, mu, sd float64) []float64 {
	out := make([]float64, max+1)
	for u := range out {
		out[u] = normCDF((float64(u)+0.5-mu)/sd) - normCDF((float64(u)-0.5-mu)/sd)
	}
	return out
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// rankSumP returns the exact one-sided p-values of the rank-sum of y
// among x and y, ties at their mid-ranks, every choice of len(y) of the
// values as the candidate's equally likely: up is P(S ≥ observed), down
// P(S ≤ observed). All values tied gives 1, 1.
func rankSumP(x, y []float64) (up, down float64) {
	all := append(append([]float64(nil), x...), y...)
	rank2 := doubledMidRanks(all)
	obs := 0
	for i := len(x); i < len(all); i++ {
		obs += rank2[i]
	}
	n := len(y)
	if len(all) > maxExactBoots {
		return rankSumNormal(rank2, n, obs)
	}
	total := 0
	for _, r := range rank2 {
		total += r
	}
	// ways[k][s]: the chance-weighted count of k values summing to s.
	ways := make([][]float64, n+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range rank2 {
		for k := min(i+1, n); k >= 1; k-- {
			for s := total; s >= r; s-- {
				ways[k][s] += ways[k-1][s-r]
			}
		}
	}
	var sum float64
	for s, w := range ways[n] {
		sum += w
		if s >= obs {
			up += w
		}
		if s <= obs {
			down += w
		}
	}
	return math.Min(up/sum, 1), math.Min(down/sum, 1)
}

// doubledMidRanks returns each value's mid-rank among v, doubled: a tie
// group at sorted positions i..j (1-based) has mid-rank (i+j)/2, so the
// doubled ranks are integers.
func doubledMidRanks(v []float64) []int {
	s := slices.Clone(v)
	slices.Sort(s)
	out := make([]int, len(v))
	for i, x := range v {
		lo, _ := slices.BinarySearch(s, x)
		hi := lo
		for hi < len(s) && s[hi] == x {
			hi++
		}
		out[i] = (lo + 1) + hi
	}
	return out
}

// rankSumNormal is rankSumP's normal approximation with the ties'
// correction, for samples past maxExactBoots.
func rankSumNormal(rank2 []int, n, obs int) (up, down float64) {
	N := len(rank2)
	var mean, sq float64
	for _, r := range rank2 {
		mean += float64(r)
	}
	mean /= float64(N)
	for _, r := range rank2 {
		sq += (float64(r) - mean) * (float64(r) - mean)
	}
	mu := float64(n) * mean
	sd := math.Sqrt(float64(n) * float64(N-n) / float64(N) * sq / float64(N-1))
	if sd == 0 {
		return 1, 1
	}
	// Doubled ranks step by 2: half a step is 1.
	return normCDF(-(float64(obs) - 1 - mu) / sd), normCDF((float64(obs) + 1 - mu) / sd)
}
