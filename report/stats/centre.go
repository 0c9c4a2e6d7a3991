package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// StatisticTrialCentre names the statistic of a Calibration measured with
// trialCentre: the Hodges-Lehmann centre of the log quantiles of a run's
// own trials. A stored baseline calibrated with it is compared with the
// same statistic (CompareTrials); a calibration without one was measured
// on the quantile of a run's merged trials, and is compared with that.
const StatisticTrialCentre = "trial-centre"

// trialLogs is the log q-quantile of each trial with events.
func trialLogs(trials []*hist.Histogram, q float64) []float64 {
	var xs []float64
	for _, h := range trials {
		if h == nil || h.Count() == 0 {
			continue
		}
		if v := h.Quantile(q); v > 0 {
			xs = append(xs, math.Log(v))
		}
	}
	return xs
}

// walshCentre is the one-sample Hodges-Lehmann estimate of xs: the median
// of the averages of every pair (i ≤ j). w is scratch of n(n+1)/2.
func walshCentre(xs []float64, w []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	w = walshAverages(xs, w[:0])
	m := len(w)
	hi := selectNth(w, m/2)
	if m%2 == 1 {
		return hi
	}
	// The lower middle is the largest of what selectNth left below m/2.
	return (slices.Max(w[:m/2]) + hi) / 2
}

// walshAverages appends to w the average of every pair of xs (i ≤ j):
// the n(n+1)/2 values behind a Hodges-Lehmann centre and a signed-rank
// test's bounds.
func walshAverages(xs, w []float64) []float64 {
	for i := range xs {
		for j := i; j < len(xs); j++ {
			w = append(w, (xs[i]+xs[j])/2)
		}
	}
	return w
}

// selectNth reorders w so that w[k] is its k-th smallest value, every value
// before it no larger and every one after no smaller (Hoare's selection:
// linear on average, where a sort of the n(n+1)/2 averages of each of
// 2000 bootstrap resamples was most of a stored comparison's time).
func selectNth(w []float64, k int) float64 {
	lo, hi := 0, len(w)-1
	for lo < hi {
		p := w[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for w[i] < p {
				i++
			}
			for w[j] > p {
				j--
			}
			if i <= j {
				w[i], w[j] = w[j], w[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return w[k]
		}
	}
	return w[k]
}

// trialCentre is a side's log centre at q (the Hodges-Lehmann centre of its
// trials' log quantiles) and the bootstrap variance of it over its trials,
// inflated by n/(n−1) as logVariance is. One bursty trial, which moves the
// quantile of the merged trials, moves this centre by one rank: a run's
// centre varies from run to run far less than its merged quantile does,
// which is what lets a stored baseline decide.
func trialCentre(xs []float64, r *rand.Rand, resamples int) (centre, variance float64) {
	n := len(xs)
	w := make([]float64, 0, n*(n+1)/2)
	centre = walshCentre(xs, w)
	variance = math.NaN()
	if n < 2 || resamples < 2 {
		return centre, variance
	}
	b := make([]float64, n)
	var sum, sum2 float64
	for range resamples {
		for i := range b {
			b[i] = xs[r.IntN(n)]
		}
		c := walshCentre(b, w)
		sum += c
		sum2 += c * c
	}
	k := float64(resamples)
	mean := sum / k
	variance = math.Max(sum2/k-mean*mean, 0) * k / (k - 1) * float64(n) / float64(n-1)
	return centre, variance
}

// centreEstimate compares two sides by their trial centres at q: Ratio is
// exp(centre(cand) − centre(base)), its variance the two sides' bootstrap
// variances pooled as pooledVariance does. It is the statistic of a
// comparison with a stored baseline whose calibration measured it.
func centreEstimate(base, cand []*hist.Histogram, q float64, resamples int, seed [32]byte) Estimate {
	bs, cs := newSide(base), newSide(cand)
	e := Estimate{
		BaseEvents: bs.merged.Count(), CandEvents: cs.merged.Count(),
		BaseTrials: len(base), CandTrials: len(cand),
		BaseVar: math.NaN(), CandVar: math.NaN(),
		Base: math.NaN(), Cand: math.NaN(), Ratio: math.NaN(),
	}
	bx, cx := trialLogs(base, q), trialLogs(cand, q)
	if len(bx) == 0 || len(cx) == 0 {
		return e.finish(0)
	}
	r := seeded(seed)
	bc, bv := trialCentre(bx, r, resamples)
	cc, cv := trialCentre(cx, r, resamples)
	e.Base, e.Cand, e.Ratio = math.Exp(bc), math.Exp(cc), math.Exp(cc-bc)
	e.BaseVar, e.CandVar = bv, cv
	e.BaseTrials, e.CandTrials = len(bx), len(cx)
	return e.finish(0)
}
