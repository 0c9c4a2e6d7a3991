package stats

import (
	"math"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// PercentileOf returns percentile p of a metric of one Result from its
// trials' histograms, merged, with the 95% interval a comparison estimates for that side (a
// matrix's cell): the bootstrap variance of the log quantile over the
// trials (logVariance, as Estimate's BaseVar and CandVar), at least the
// bucket's own resolution, as exp(log value ± t·SE) with the trials less
// one degrees of freedom. lo and hi are NaN for max and when the metric
// has no events. resamples ≤ 0 means DefaultResamples.
func PercentileOf(trials []*hist.Histogram, metric string, p Percentile, resamples int) (value, lo, hi float64) {
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	s := newSide(trials)
	value, lo, hi = p.Of(s.merged), math.NaN(), math.NaN()
	if p.Q >= 1 || !(value > 0) {
		return value, lo, hi
	}
	v := s.logVariance(seeded(seedFor(contentHash(trials, nil), metric, p.Name)), p.Q, resamples)
	if math.IsNaN(v) {
		return value, lo, hi
	}
	se := math.Sqrt(math.Max(v, bucketVariance(value)))
	half := tQuantile(0.025, float64(max(len(trials)-1, 1))) * se
	return value, value * math.Exp(-half), value * math.Exp(half)
}
