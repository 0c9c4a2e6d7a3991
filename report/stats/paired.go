package stats

import (
	"math"
	"slices"
	"sync"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// Paired rounds: the comparison of a same-job gate.
//
// A same-job gate runs base and head in rounds, one trial of each per
// round, in an order drawn at random within each round. Each round gives
// one number per metric and percentile: d = log(head's trial quantile) −
// log(base's trial quantile). The quantile of one trial, not of the merged
// trials: a merged p99 moves with the tails of a few disturbed trials,
// while each trial's own p99 is one vote among the rounds.
//
// The test is Wilcoxon's signed-rank test over the rounds' d, and the
// estimate its Hodges-Lehmann centre (the median of the Walsh averages
// (d_i + d_j)/2, i ≤ j), reported as the ratio exp(centre). Because the
// order within each round was random, when base and head are the same the
// sign of every d is a fair coin independent of its size and of every
// other round, whatever the noise does to the sizes: the signed-rank test
// computed on that coin (exactly, ties and all, by signFlipP) holds its
// level with no model of the noise. Ranks also bound what one disturbed
// round can do: it is one rank, however far it lands.
//
// The intervals (Walsh averages between the signed-rank critical values)
// assume in addition that a change shifts every round's d alike; they
// decide "no change" and are what the reports show.

// rankData is what a rank-based verdict keeps to find its bounds at any
// level: the sorted values whose order statistics the bounds are (a
// paired verdict's Walsh averages) and the null distribution of its rank statistic, tail[w] = P(W ≥ w).
type rankData struct {
	values []float64 // sorted
	tail   []float64
	// resolution widens the "no change" bounds on the log scale (boots in
	// virtual time: the histogram's bucket); 0 for paired rounds.
	resolution float64
	// count is the rounds (or the fewer boots of a side) behind the
	// values, and minFor the fewest at which one-sided level a can be
	// reached; nil means minRoundsFor.
	count  int
	minFor func(a float64) int
	// boots says count is the candidate's boots (CompareBoots), not
	// rounds.
	boots bool
}

// need is the fewest rounds (or boots a side) that can reach level a.
func (p *rankData) need(a float64) int {
	if p.minFor != nil {
		return p.minFor(a)
	}
	return minRoundsFor(a)
}

// roundPair is one round's trials of a metric, base's and candidate's.
type roundPair struct{ base, cand *hist.Histogram }

// pairRounds returns, in round order, the rounds both metrics have a
// trial of (Trial.Round). ok is false unless every trial of both
// sides carries a round, once, and they share one: trials of separate
// runs are not pairs.
func pairRounds(base, cand *Sample) (pairs []roundPair, ok bool) {
	return pairBy(base, cand, func(t Trial) uint64 { return uint64(max(t.Round, 0)) })
}

// pairBy returns, in key order, the keys both metrics have a trial of;
// ok is false unless every trial of both has a key (not 0), once, and
// they share one.
func pairBy(base, cand *Sample, key func(Trial) uint64) (pairs []roundPair, ok bool) {
	byKey := func(m *Sample) (map[uint64]*hist.Histogram, bool) {
		out := make(map[uint64]*hist.Histogram, len(m.Trials))
		for _, t := range m.Trials {
			k := key(t)
			if k == 0 {
				return nil, false
			}
			if _, dup := out[k]; dup {
				return nil, false
			}
			out[k] = t.Histogram
		}
		return out, len(out) > 0
	}
	b, okb := byKey(base)
	c, okc := byKey(cand)
	if !okb || !okc {
		return nil, false
	}
	var keys []uint64
	for k := range b {
		if _, both := c[k]; both {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		pairs = append(pairs, roundPair{b[k], c[k]})
	}
	return pairs, len(pairs) > 0
}

// logRatios returns each pair's log ratio of the candidate's trial
// q-quantile to the base's, leaving out pairs where either has no events.
func logRatios(pairs []roundPair, q float64) []float64 {
	var d []float64
	for _, p := range pairs {
		if p.base == nil || p.cand == nil || p.base.Count() == 0 || p.cand.Count() == 0 {
			continue
		}
		qb, qc := p.base.Quantile(q), p.cand.Quantile(q)
		if !(qb > 0) || !(qc > 0) {
			continue
		}
		d = append(d, math.Log(qc)-math.Log(qb))
	}
	return d
}

// signFlipP returns the exact one-sided p-values of the signed-rank
// statistic of d under random signs, given the sizes |d|: up is
// P(W ≥ observed), the chance of a sum of positive ranks at least this
// large, down is P(W ≤ observed). Zeros carry no sign and are left out;
// tied sizes share their mid-rank. This is the randomization test the
// random order within rounds makes exact.
func signFlipP(d []float64) (up, down float64) {
	var abs []float64
	var pos []bool
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			abs, pos = append(abs, math.Abs(x)), append(pos, x > 0)
		}
	}
	if len(abs) == 0 {
		return 1, 1
	}
	ranks := doubledMidRanks(abs)
	obs, total := 0, 0
	for i, r := range ranks {
		total += r
		if pos[i] {
			obs += r
		}
	}
	// dist[s]: the chance that the ranks given a + sign sum to s.
	dist := make([]float64, total+1)
	dist[0] = 1
	reach := 0
	for _, r := range ranks {
		for s := reach; s >= 0; s-- {
			if dist[s] == 0 {
				continue
			}
			dist[s+r] += dist[s] / 2
			dist[s] /= 2
		}
		reach += r
	}
	for s, p := range dist {
		if s >= obs {
			up += p
		}
		if s <= obs {
			down += p
		}
	}
	return math.Min(up, 1), math.Min(down, 1)
}

// signedRankTail returns tail[w] = P(W ≥ w) for w = 0..n(n+1)/2, W the
// signed-rank statistic of n rounds without ties under random signs.
// Tails are cached per n: a gate asks for the same n for every metric and
// percentile of a look.
func signedRankTail(n int) []float64 {
	if v, ok := tailCache.Load(n); ok {
		return v.([]float64)
	}
	m := n * (n + 1) / 2
	dist := make([]float64, m+1)
	dist[0] = 1
	reach := 0
	for r := 1; r <= n; r++ {
		for s := reach; s >= 0; s-- {
			dist[s+r] += dist[s] / 2
			dist[s] /= 2
		}
		reach += r
	}
	tail := make([]float64, m+2)
	for w := m; w >= 0; w-- {
		tail[w] = tail[w+1] + dist[w]
	}
	tail = tail[:m+1]
	tailCache.Store(n, tail)
	return tail
}

var tailCache sync.Map // int → []float64

// newPaired prepares the Walsh averages of d.
func newPaired(d []float64) *rankData {
	n := len(d)
	w := walshAverages(d, make([]float64, 0, n*(n+1)/2))
	slices.Sort(w)
	return &rankData{values: w, tail: signedRankTail(n), count: n}
}

// centre is the Hodges-Lehmann estimate: the median of the values.
func (p *rankData) centre() float64 {
	m := len(p.values)
	if m == 0 {
		return math.NaN()
	}
	if m%2 == 1 {
		return p.values[m/2]
	}
	return (p.values[m/2-1] + p.values[m/2]) / 2
}

// critical returns the smallest c with P(W ≥ c) ≤ a, or M+1 (no c
// reaches the level) where M is the number of values.
func (p *rankData) critical(a float64) int {
	tail := p.tail
	m := len(tail) - 1
	// tail is decreasing in w: search for the first w with tail[w] ≤ a.
	lo, hi := 0, m+1
	for lo < hi {
		mid := (lo + hi) / 2
		if tail[mid] <= a {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// lower is the one-sided lower confidence bound of the log shift at level
// a (a chance a of lying above the true shift): −Inf when so few rounds
// cannot reach the level.
func (p *rankData) lower(a float64) float64 {
	m := len(p.values)
	c := p.critical(a)
	if c > m || c < 1 {
		return math.Inf(-1)
	}
	return p.values[m-c]
}

// upper mirrors lower.
func (p *rankData) upper(a float64) float64 {
	m := len(p.values)
	c := p.critical(a)
	if c > m || c < 1 {
		return math.Inf(1)
	}
	return p.values[c-1]
}

// minRoundsFor is the fewest rounds at which a signed-rank test can reach
// one-sided level a at all: every round's sign the same, chance 2^-n.
func minRoundsFor(a float64) int {
	if !(a > 0) {
		return math.MaxInt32
	}
	return int(math.Ceil(math.Log2(1 / a)))
}

// pairedEstimate is the paired comparison of one metric at quantile q
// over its rounds' log ratios d: the ratio exp(centre), the 95% interval,
// the one-sided p-value in the estimate's direction. Base and Cand are
// the medians of the two sides' trial quantiles, for the table (the ratio
// is the rounds', not Cand/Base).
func pairedEstimate(base, cand *Sample, d []float64, q float64) (Estimate, *rankData) {
	bm, cm := base.Merged(), cand.Merged()
	e := Estimate{
		BaseEvents: bm.Count(), CandEvents: cm.Count(),
		BaseTrials: len(base.Trials), CandTrials: len(cand.Trials),
		BaseVar: math.NaN(), CandVar: math.NaN(),
		SE: math.NaN(), DF: math.NaN(), Lo: math.NaN(), Hi: math.NaN(),
		Ratio: math.NaN(), Rounds: len(d), Ranked: true,
	}
	e.Base = medianTrialQuantile(base, q)
	e.Cand = medianTrialQuantile(cand, q)
	if len(d) == 0 {
		e.PUp, e.PDown = 1, 1
		return e, nil
	}
	p := newPaired(d)
	c := p.centre()
	e.Ratio = math.Exp(c)
	lo, hi := p.lower(0.025), p.upper(0.025)
	e.Lo, e.Hi = math.Exp(lo), math.Exp(hi)
	e.DF = float64(len(d) - 1)
	if !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
		e.SE = (hi - lo) / (2 * 1.96)
	}
	e.PUp, e.PDown = signFlipP(d)
	return e, p
}

// medianTrialQuantile is the median over a metric's trials of each
// trial's q-quantile (NaN without events).
func medianTrialQuantile(m *Sample, q float64) float64 {
	var qs []float64
	for _, t := range m.Trials {
		if t.Histogram != nil && t.Histogram.Count() > 0 {
			qs = append(qs, t.Histogram.Quantile(q))
		}
	}
	if len(qs) == 0 {
		return math.NaN()
	}
	slices.Sort(qs)
	if len(qs)%2 == 1 {
		return qs[len(qs)/2]
	}
	return (qs[len(qs)/2-1] + qs[len(qs)/2]) / 2
}
