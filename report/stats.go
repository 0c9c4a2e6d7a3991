// Package report compares Results and renders the comparison. The
// statistics (this file, verdict.go, threshold.go) are pure: they never
// print. The renderers (text.go, markdown.go, json.go, junit.go) only lay
// out what the statistics returned.
package report

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// DefaultResamples is the number of bootstrap resamples behind each
// confidence interval.
const DefaultResamples = 2000

// Percentile is a quantile the gate reports, by name.
type Percentile struct {
	Name string  // "p50", "p90", "p99", "p99.9", "max"
	Q    float64 // 0.5 … 1
}

// Percentiles are the quantiles every comparison reports, in order.
var Percentiles = []Percentile{
	{"p50", 0.5},
	{"p90", 0.9},
	{"p99", 0.99},
	{"p99.9", 0.999},
	{"max", 1},
}

// LookupPercentile returns the percentile of the given name.
func LookupPercentile(name string) (Percentile, bool) {
	for _, p := range Percentiles {
		if p.Name == name {
			return p, true
		}
	}
	return Percentile{}, false
}

// Estimate is a ratio candidate/baseline of one quantile with its
// bootstrap confidence interval.
type Estimate struct {
	Base, Cand float64 // the quantile of the merged trials, ns
	Ratio      float64 // Cand / Base
	Lo, Hi     float64 // 95% confidence interval of Ratio
	// BaseEvents and CandEvents are the merged event counts.
	BaseEvents, CandEvents uint64
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

// scratch is per-resample working memory, allocated once per comparison.
type scratch struct {
	slot []int    // the trials drawn (with replacement)
	w    []uint64 // each drawn trial's resampled count in the current range
	left []uint64 // its share of the left half
}

func newScratch(n int) *scratch {
	return &scratch{slot: make([]int, n), w: make([]uint64, n), left: make([]uint64, n)}
}

// resample draws one hierarchical bootstrap replicate of the side and
// returns its q-quantile: trials are drawn with replacement, then each
// drawn trial's events are Poisson-resampled bucket by bucket.
//
// Weighting every bucket count c by an independent Poisson(c) draw is the
// same, in distribution, as drawing the trial's total as Poisson(N) and
// splitting it binomially between halves of the bucket range, recursively.
// Only the half that holds the quantile's rank needs splitting further, so
// a replicate costs O(trials · log buckets) draws instead of
// O(trials · buckets), and nothing is allocated.
func (s *side) resample(r *rand.Rand, q float64, sc *scratch) float64 {
	n := len(s.prefix)
	u := len(s.idx)
	if n == 0 || u == 0 {
		return math.NaN()
	}
	var total uint64
	for i := range sc.slot {
		t := r.IntN(n)
		sc.slot[i] = t
		sc.w[i] = poisson(r, float64(s.prefix[t][u]))
		total += sc.w[i]
	}
	if total == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(total)))
	rank = max(rank, 1)
	rank = min(rank, total)
	// Invariant: before < rank ≤ before + Σw, the rank lies in idx[lo:hi].
	lo, hi := 0, u
	var before uint64
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		var left uint64
		for i, t := range sc.slot {
			sc.left[i] = 0
			if sc.w[i] == 0 {
				continue
			}
			p := s.prefix[t]
			cn, cl := p[hi]-p[lo], p[mid]-p[lo]
			sc.left[i] = binomial(r, sc.w[i], float64(cl)/float64(cn))
			left += sc.left[i]
		}
		if before+left >= rank {
			hi = mid
			for i := range sc.w {
				sc.w[i] = sc.left[i]
			}
		} else {
			before += left
			lo = mid
			for i := range sc.w {
				sc.w[i] -= sc.left[i]
			}
		}
	}
	return hist.Mid(s.idx[lo])
}

// estimate computes the ratio of q-quantiles and its bootstrap CI. seed
// makes the resampling reproducible; resamples < 1 means no CI (Lo, Hi
// NaN).
func estimate(base, cand *side, q float64, resamples int, seed [32]byte) Estimate {
	e := Estimate{
		Base:       base.merged.Quantile(q),
		Cand:       cand.merged.Quantile(q),
		BaseEvents: base.merged.Count(),
		CandEvents: cand.merged.Count(),
		Lo:         math.NaN(),
		Hi:         math.NaN(),
	}
	e.Ratio = e.Cand / e.Base
	if resamples < 1 || e.BaseEvents == 0 || e.CandEvents == 0 {
		return e
	}
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
	bs, cs := newScratch(len(base.prefix)), newScratch(len(cand.prefix))
	ratios := make([]float64, 0, resamples)
	for range resamples {
		b := base.resample(r, q, bs)
		c := cand.resample(r, q, cs)
		if x := c / b; !math.IsNaN(x) && !math.IsInf(x, 0) {
			ratios = append(ratios, x)
		}
	}
	if len(ratios) == 0 {
		return e
	}
	e.Lo, e.Hi = interval95(ratios)
	return e
}

// interval95 sorts bootstrap values and returns their 2.5th and 97.5th
// percentiles: the 95% percentile interval.
func interval95(vals []float64) (lo, hi float64) {
	slices.Sort(vals)
	return vals[int(0.025*float64(len(vals)-1))], vals[int(math.Ceil(0.975*float64(len(vals)-1)))]
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

// Draws below this mean are exact; above it the normal approximation is
// within the bootstrap's own noise and costs one draw.
const exactBelow = 30

// poisson draws from Poisson(lambda).
func poisson(r *rand.Rand, lambda float64) uint64 {
	if lambda <= 0 {
		return 0
	}
	if lambda < exactBelow {
		limit := math.Exp(-lambda)
		var k uint64
		for p := r.Float64(); p > limit; p *= r.Float64() {
			k++
		}
		return k
	}
	x := math.Round(lambda + math.Sqrt(lambda)*r.NormFloat64())
	if x < 0 {
		return 0
	}
	return uint64(x)
}

// binomial draws from Binomial(n, p).
func binomial(r *rand.Rand, n uint64, p float64) uint64 {
	switch {
	case n == 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	case p > 0.5:
		return n - binomial(r, n, 1-p)
	}
	if n <= 16 {
		// Few events: counting Bernoulli trials beats any transcendental.
		var k uint64
		for range n {
			if r.Float64() < p {
				k++
			}
		}
		return k
	}
	mean := float64(n) * p
	if mean < exactBelow {
		// Inversion: walk the pmf from 0 until it covers a uniform draw.
		f := math.Exp(float64(n) * math.Log1p(-p))
		odds := p / (1 - p)
		u := r.Float64()
		var k uint64
		for u > f && k < n {
			u -= f
			f *= odds * float64(n-k) / float64(k+1)
			k++
			if f == 0 {
				break
			}
		}
		return k
	}
	x := math.Round(mean + math.Sqrt(mean*(1-p))*r.NormFloat64())
	return uint64(min(max(x, 0), float64(n)))
}
