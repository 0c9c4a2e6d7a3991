package report

import (
	"math"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Plot is what a metric's two plots show, a series per target in
// Matrix.Targets order: the tail of the target's distribution, and at one
// percentile each trial's value beside the trials merged.
type Plot struct {
	// Percentile is the per-trial plot's: the highest the gate policy
	// gates (the rows' verdicts say which), else p99.
	Percentile string
	// Threshold is the first gated verdict's at Percentile, the band drawn
	// around the reference; 0 for none.
	Threshold float64
	Series    []PlotSeries
}

// PlotSeries is one target's data on a metric's plots.
type PlotSeries struct {
	// Tail is the fraction of the trials' merged events slower than each
	// latency; nil without events, or where the target lacks the metric.
	Tail []TailPoint
	// Trials holds each trial's value at the Plot's Percentile (NaN for a
	// trial without events); Value is the trials merged's (NaN without
	// events).
	Trials []float64
	Value  float64
	// Lo and Hi are the 95% interval of the ratio to the reference (the
	// target's verdict) applied to the reference's Value; NaN for none.
	Lo, Hi float64
}

// TailPoint is one point of a tail: Slower is the fraction of the events
// slower than Ns.
type TailPoint struct{ Ns, Slower float64 }

// plotOf is the Plot of a scenario's metric in each of results at
// percentile p; verdicts holds each result's verdict of p against the
// first (nil for the first and where it was not compared), whose interval
// is drawn on the reference's value.
func plotOf(results []*result.Result, scenario, metric string, p stats.Percentile, verdicts []*stats.Verdict) *Plot {
	pl := &Plot{Percentile: p.Name}
	ref := math.NaN()
	for i, r := range results {
		var m *result.Metric
		if s := r.Find(scenario); s != nil {
			m = s.Metrics[metric]
		}
		ps := PlotSeries{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		if m == nil {
			pl.Series = append(pl.Series, ps)
			continue
		}
		merged := m.Merged()
		ps.Tail = survival(merged)
		for _, trial := range m.Trials {
			v := math.NaN()
			if trial.Histogram != nil {
				v = p.Of(trial.Histogram)
			}
			ps.Trials = append(ps.Trials, v)
		}
		ps.Value = p.Of(merged)
		if i == 0 {
			ref = ps.Value
		}
		if v := verdicts[i]; v != nil {
			if v.Gated && pl.Threshold == 0 {
				pl.Threshold = v.Threshold
			}
			if !math.IsNaN(v.Lo) && !math.IsNaN(ref) {
				ps.Lo, ps.Hi = ref*v.Lo, ref*v.Hi
			}
		}
		pl.Series = append(pl.Series, ps)
	}
	return pl
}

// survival is 1−CDF of h: at the upper edge of each non-empty bucket, the
// fraction of events beyond it. The last bucket, where nothing is beyond,
// cannot sit on a log axis and is left out.
func survival(h *hist.Histogram) []TailPoint {
	n := h.Count()
	if n == 0 {
		return nil
	}
	var pts []TailPoint
	var cum uint64
	for i, c := range h.Counts() {
		if c == 0 {
			continue
		}
		lo, w := hist.Bounds(i)
		if len(pts) == 0 {
			pts = append(pts, TailPoint{Ns: math.Max(float64(lo), 1), Slower: 1})
		}
		cum += c
		if cum == n {
			break
		}
		pts = append(pts, TailPoint{Ns: float64(lo + w), Slower: float64(n-cum) / float64(n)})
	}
	return pts
}
