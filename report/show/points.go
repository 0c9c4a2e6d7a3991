package show

import (
	"github.com/tailgate-ci/tailgate/report"
	"math"

	"github.com/tailgate-ci/tailgate/report/stats"
)

// The formats of benchmark trackers, which keep a series per benchmark
// across commits and want one value per benchmark and run: a value per
// scenario, metric and percentile, the percentile of the trials merged
// (as the gate reads a side), with the 95% interval the comparison
// estimates for that side where the trials support one (intervalOf).

// MinIntervalTrials is the fewest trials with events from which a tracker
// is given an interval: benchstat's floor for a 95% interval
// (x/perf/benchmath). With fewer, the chance that every trial lies on
// one side of the centre, 2^(1-n), is over 5%, and an interval kept
// within the trials' values cannot hold 95%.
const MinIntervalTrials = 6

// trackerPoint is one benchmark of a tracker: scenario/metric/percentile.
type trackerPoint struct {
	name   string
	value  float64 // ns, to a tenth (round)
	lo, hi float64 // likewise; NaN when there is no interval
	trials int     // with events
	events uint64
}

// Trackers is what a benchmark tracker is given of a Document, computed
// once here so that its formats (GitHubActionBenchmark, Bencher) only lay
// it out: a point per scenario, metric and percentile, and where they
// were measured.
type Trackers struct {
	points         []trackerPoint
	target, kernel string
}

// Trackers computes d's points for the trackers' formats.
func (d *Document) Trackers() *Trackers {
	return &Trackers{points: d.trackerPoints(), target: d.Target.Name, kernel: d.Environment.KernelRelease}
}

// trackerPoints lists the points of d in the order of its scenarios, its
// metrics (gated first) and stats.Percentiles; metrics without events
// have none.
func (d *Document) trackerPoints() []trackerPoint {
	var out []trackerPoint
	for _, s := range d.Scenarios {
		for i := range s.Metrics {
			m := &s.Metrics[i]
			if m.All.Count == 0 || m.src == nil {
				continue
			}
			for _, p := range stats.Percentiles {
				pt := intervalOf(m, p)
				if math.IsNaN(pt.value) {
					continue
				}
				pt.name, pt.events = s.Name+"/"+m.Name+"/"+p.Name, m.All.Count
				out = append(out, pt)
			}
		}
	}
	return out
}

// intervalOf is m's point at percentile p: the quantile of its trials
// merged and, short of max and from MinIntervalTrials trials on, the 95%
// interval of stats.PercentileOf, kept within the range of the trials' own
// values of p (which holds the merged value) and around the value. Each
// is rounded first, so that the bounds hold of the numbers written.
func intervalOf(m *Metric, p stats.Percentile) trackerPoint {
	trials := report.TrialHistograms(m.src)
	v, lo, hi := stats.PercentileOf(trials, m.Name, p, 0)
	least, most := math.Inf(1), math.Inf(-1)
	n := 0
	for _, h := range trials {
		if h.Count() > 0 {
			x := p.Of(h)
			least, most, n = math.Min(least, x), math.Max(most, x), n+1
		}
	}
	pt := trackerPoint{value: round(v), lo: math.NaN(), hi: math.NaN(), trials: n}
	if n < MinIntervalTrials || math.IsNaN(lo) || math.IsNaN(hi) {
		return pt
	}
	pt.lo = math.Min(math.Max(round(lo), round(least)), pt.value)
	pt.hi = math.Max(math.Min(round(hi), round(most)), pt.value)
	return pt
}

// round keeps a tenth of a ns: the histogram resolves no finer, and the
// digits beyond would only churn the trackers' files.
func round(ns float64) float64 { return math.Round(ns*10) / 10 }
