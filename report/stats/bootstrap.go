package stats

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/report/stats/draw"
)

// DefaultResamples is the number of bootstrap resamples behind each
// confidence interval; MaxResamples the most a command takes: 50 times
// as many, a minute or so for a large Result (BENCHMARKS.md).
const (
	DefaultResamples = 2000
	MaxResamples     = 100000
)

// Estimate is a ratio candidate/baseline of one quantile with the spread
// behind it.
type Estimate struct {
	Base, Cand float64 // the quantile of the merged trials, ns
	Ratio      float64 // Cand / Base
	// BaseVar and CandVar are the bootstrap variances of each side's log
	// quantile (resample trials, then events), inflated by n/(n−1).
	BaseVar, CandVar float64
	// ExcessVar is the between-run variance of log Ratio added for a
	// stored baseline with calibration (2σ²: each side is one run); 0
	// otherwise.
	ExcessVar float64
	// SE is the standard error of log Ratio: the two variances above (at
	// least the histogram buckets' own resolution) plus ExcessVar. DF is
	// its degrees of freedom: the fewer trials of the two sides, minus 1.
	SE, DF float64
	// Lo and Hi are the 95% confidence interval of Ratio,
	// exp(log Ratio ± t·SE).
	Lo, Hi float64
	// BaseEvents and CandEvents are the merged event counts, BaseTrials
	// and CandTrials the trials.
	BaseEvents, CandEvents uint64
	BaseTrials, CandTrials int
	// Rounds, for a paired estimate (trials paired by round, see
	// paired.go), is the number of rounds behind it, 0 otherwise. PUp and
	// PDown are then its exact one-sided p-values of "no shift" against a
	// shift up and down.
	Rounds     int
	PUp, PDown float64
	// Ranked says the estimate is rank-based (paired rounds), its
	// p-values PUp and PDown.
	Ranked bool
}

// side is one side of a comparison (baseline or candidate) prepared for
// resampling: the union of the trials' non-empty buckets, and per trial the
// cumulative counts over that union, so that any range of buckets of any
// trial is summed in O(1).
type side struct {
	idx    []int      // bucket indexes present in any trial, increasing
	prefix [][]uint64 // prefix[t][k]: trial t's count in idx[:k]; len(idx)+1
	merged *hist.Histogram
}

func newSide(trials []*hist.Histogram) *side {
	s := &side{merged: hist.New()}
	present := make([]bool, hist.Buckets)
	for _, h := range trials {
		s.merged.Merge(h)
		for i, c := range h.Counts() {
			if c != 0 {
				present[i] = true
			}
		}
	}
	for i, p := range present {
		if p {
			s.idx = append(s.idx, i)
		}
	}
	for _, h := range trials {
		p := make([]uint64, len(s.idx)+1)
		counts := h.Counts()
		for k, i := range s.idx {
			var c uint64
			if counts != nil {
				c = counts[i]
			}
			p[k+1] = p[k] + c
		}
		s.prefix = append(s.prefix, p)
	}
	return s
}

// scratch is per-resample working memory for one side and quantile,
// allocated once.
type scratch struct {
	mult  []uint64 // how often each trial was drawn in the current replicate
	drawn []int    // the trials drawn at least once
	// lo and hi bracket, in positions of idx, where the replicate's
	// quantile almost always falls (see bracket).
	lo, hi int
}

func (s *side) newScratch(q float64) *scratch {
	n := len(s.prefix)
	sc := &scratch{mult: make([]uint64, n), drawn: make([]int, 0, n)}
	sc.lo, sc.hi = s.bracket(q)
	return sc
}

// bracket returns positions [lo, hi) of idx around every trial's own
// q-quantile, with a margin. A merge of trials has its quantile between
// the trials' own, so a replicate's falls outside only by its Poisson
// noise; resample then needs a few halvings inside the bracket, not all
// of the bucket range's.
func (s *side) bracket(q float64) (lo, hi int) {
	u := len(s.idx)
	lo, hi = u, 0
	for _, p := range s.prefix {
		total := p[u]
		if total == 0 {
			continue
		}
		rank := min(max(uint64(math.Ceil(q*float64(total))), 1), total)
		k := sort.Search(u, func(k int) bool { return p[k+1] >= rank })
		lo, hi = min(lo, k), max(hi, k+1)
	}
	const margin = 4
	if lo >= hi {
		return 0, u
	}
	return max(lo-margin, 0), min(hi+margin, u)
}

// resample draws one hierarchical bootstrap replicate of the side and
// returns its q-quantile: trials are drawn with replacement, then each
// drawn trial's events are Poisson-resampled bucket by bucket.
//
// A sum of independent Poisson variables is Poisson with the summed mean,
// so weighting every bucket of every drawn copy by its own Poisson draw and
// merging is the same, in distribution, as one Poisson draw per bucket of
// the merge of the drawn trials (each counted as often as drawn). Poisson
// counts over buckets are in turn independent Poisson counts of a few
// ranges (below the bracket, in it, above it), each split binomially
// between halves, recursively. Only the half that holds the quantile's
// rank needs splitting further, so a replicate costs one binomial draw per
// halving plus O(trials · log buckets) additions, and allocates nothing.
func (s *side) resample(r *rand.Rand, q float64, sc *scratch) float64 {
	n := len(s.prefix)
	u := len(s.idx)
	if n == 0 || u == 0 {
		return math.NaN()
	}
	for _, t := range sc.drawn {
		sc.mult[t] = 0
	}
	sc.drawn = sc.drawn[:0]
	for range n {
		t := r.IntN(n)
		if sc.mult[t] == 0 {
			sc.drawn = append(sc.drawn, t)
		}
		sc.mult[t]++
	}
	// count is the merged count of the drawn trials in idx[lo:hi].
	count := func(lo, hi int) uint64 {
		var c uint64
		for _, t := range sc.drawn {
			c += sc.mult[t] * (s.prefix[t][hi] - s.prefix[t][lo])
		}
		return c
	}
	// The three ranges' counts are independent Poisson draws.
	bounds := [4]int{0, sc.lo, sc.hi, u}
	var have, got [3]uint64
	var total uint64
	for i := range 3 {
		have[i] = count(bounds[i], bounds[i+1])
		got[i] = draw.Poisson(r, float64(have[i]))
		total += got[i]
	}
	if total == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(total)))
	rank = max(rank, 1)
	rank = min(rank, total)
	var before uint64
	part := 0
	for before+got[part] < rank {
		before += got[part]
		part++
	}
	// Invariant: the replicate has w events in idx[lo:hi], where the
	// drawn trials have inRange, and before < rank ≤ before + w.
	lo, hi := bounds[part], bounds[part+1]
	w, inRange := got[part], have[part]
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		inLeft := count(lo, mid)
		left := draw.Binomial(r, w, float64(inLeft)/float64(inRange))
		if before+left >= rank {
			hi, w, inRange = mid, left, inLeft
		} else {
			lo, w, inRange = mid, w-left, inRange-inLeft
			before += left
		}
	}
	return hist.Mid(s.idx[lo])
}

// estimate computes the ratio of q-quantiles and the bootstrap variance of
// each side's log quantile. seed makes the resampling reproducible;
// resamples < 1 means no variance (NaN). finish adds any between-run
// spread and derives the standard error, p-value and interval.
func estimate(base, cand *side, q float64, resamples int, seed [32]byte) Estimate {
	e := Estimate{
		Base:       base.merged.Quantile(q),
		Cand:       cand.merged.Quantile(q),
		BaseEvents: base.merged.Count(),
		CandEvents: cand.merged.Count(),
		BaseTrials: len(base.prefix),
		CandTrials: len(cand.prefix),
		BaseVar:    math.NaN(),
		CandVar:    math.NaN(),
	}
	e.Ratio = e.Cand / e.Base
	if resamples >= 1 && e.BaseEvents > 0 && e.CandEvents > 0 {
		r := seeded(seed)
		e.BaseVar = base.logVariance(r, q, resamples)
		e.CandVar = cand.logVariance(r, q, resamples)
	}
	return e.finish(0)
}

// finish sets the between-run variance of log Ratio to excess and derives
// SE, DF and the 95% interval.
func (e Estimate) finish(excess float64) Estimate {
	e.ExcessVar = excess
	e.SE, e.DF, e.Lo, e.Hi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	v := pooledVariance(e.BaseVar, e.CandVar, e.BaseTrials, e.CandTrials)
	if math.IsNaN(v) || !(e.Ratio > 0) || math.IsInf(e.Ratio, 0) {
		return e
	}
	v = math.Max(v, bucketVariance(e.Base)+bucketVariance(e.Cand))
	e.SE = math.Sqrt(v + excess)
	e.DF = float64(max(min(e.BaseTrials, e.CandTrials)-1, 1))
	half := tQuantile(0.025, e.DF) * e.SE
	e.Lo, e.Hi = e.Ratio*math.Exp(-half), e.Ratio*math.Exp(half)
	return e
}

// pooledVariance is the variance of log Ratio from the two sides'
// bootstrap variances of their log quantiles: the larger per-trial
// variance of the two (a side's variance times its trials), over each
// side's trials. A scale shift leaves the per-trial spread of log
// latencies as it is, so the two sides estimate one variance; taking the
// larger guards against the side whose trials all missed a rare slow
// cluster of processes, whose own variance is then low exactly when its
// quantile is extreme (the simulations show the sum of the two below the
// level under the measured noise).
func pooledVariance(baseVar, candVar float64, baseTrials, candTrials int) float64 {
	nb, nc := float64(baseTrials), float64(candTrials)
	if nb < 1 || nc < 1 {
		return math.NaN()
	}
	return math.Max(baseVar*nb, candVar*nc) * (1/nb + 1/nc)
}

// P is the one-sided p-value of the estimate in its own direction: of H0
// "ratio ≤ 1" when Ratio > 1, of H0 "ratio ≥ 1" when it is below, from
// t = log(Ratio)/SE against Student's t with DF degrees of freedom. NaN
// when there is no SE.
func (e Estimate) P() float64 {
	if e.Ranked {
		if e.Ratio >= 1 {
			return e.PUp
		}
		return e.PDown
	}
	if math.IsNaN(e.SE) {
		return math.NaN()
	}
	if e.SE == 0 {
		if e.Ratio == 1 {
			return 0.5
		}
		return 0
	}
	return tTail(math.Abs(math.Log(e.Ratio))/e.SE, e.DF)
}

// logVariance is the bootstrap variance of the side's log q-quantile,
// inflated by n/(n−1): resampling n trials from n spreads a mean by
// (n−1)/n of what n new trials would, and the quantile of merged trials
// behaves like such a mean.
func (s *side) logVariance(r *rand.Rand, q float64, resamples int) float64 {
	sc := s.newScratch(q)
	var sum, sum2 float64
	k := 0
	for range resamples {
		v := s.resample(r, q, sc)
		if !(v > 0) {
			continue
		}
		l := math.Log(v)
		sum += l
		sum2 += l * l
		k++
	}
	if k < 2 {
		return math.NaN()
	}
	mean := sum / float64(k)
	v := math.Max(sum2/float64(k)-mean*mean, 0) * float64(k) / float64(k-1)
	if n := len(s.prefix); n > 1 {
		v *= float64(n) / float64(n-1)
	}
	return v
}

// bucketVariance is the variance, on the log scale, of a value known only
// to lie in the bucket that holds x: uniform over the bucket's relative
// width. A quantile is read at its bucket's midpoint, so this much
// uncertainty remains however many events there are.
func bucketVariance(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	i := hist.Bucket(uint64(x))
	_, w := hist.Bounds(i)
	if w == 1 {
		return 0 // unit buckets hold exact values
	}
	rel := float64(w) / hist.Mid(i)
	return rel * rel / 12
}

// contentHash digests the trials' bucket counts, so that the same inputs
// always resample the same way.
func contentHash(base, cand []*hist.Histogram) [32]byte {
	d := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		d.Write(b[:])
	}
	for _, trials := range [][]*hist.Histogram{base, cand} {
		put(uint64(len(trials)))
		for _, h := range trials {
			put(h.Count())
			for i, c := range h.Counts() {
				if c != 0 {
					put(uint64(i))
					put(c)
				}
			}
		}
	}
	var out [32]byte
	d.Sum(out[:0])
	return out
}

// seedFor is the seed of one metric's percentile: the same inputs resample
// the same way, and no two percentiles share their draws.
func seedFor(content [32]byte, metric, percentile string) [32]byte {
	d := sha256.New()
	d.Write(content[:])
	d.Write([]byte(metric))
	d.Write([]byte{0})
	d.Write([]byte(percentile))
	var out [32]byte
	d.Sum(out[:0])
	return out
}

// seeded is the random source a seed starts.
func seeded(seed [32]byte) *rand.Rand {
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
}
