package report

import "github.com/tailgate-ci/tailgate/internal/result"

// PercentileOf returns percentile p of a metric of one Result, its trials
// merged, with the 95% interval a comparison estimates for that side (the
// matrix's cell: the bootstrap variance of the log quantile over the
// trials, at least the bucket's resolution). lo and hi are NaN for max
// and when the metric has no events. resamples ≤ 0 means
// DefaultResamples.
func PercentileOf(m *result.Metric, metric string, p Percentile, resamples int) (value, lo, hi float64) {
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	c := cellOf(trialsOf(m), p, resamples, metric)
	return c.Value, c.Lo, c.Hi
}
