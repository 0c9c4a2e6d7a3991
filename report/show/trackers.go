package show

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
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
	v, lo, hi := stats.PercentileOf(m.src, m.Name, p, 0)
	least, most := math.Inf(1), math.Inf(-1)
	n := 0
	for _, h := range stats.TrialHistograms(m.src) {
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

// gabResult is one entry of github-action-benchmark's custom JSON (its
// BenchmarkResult: name, value and unit required, range and extra text).
type gabResult struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

// GitHubActionBenchmark writes the JSON array that github-action-benchmark
// reads with tool: customSmallerIsBetter: an entry per scenario, metric
// and percentile in ns, its range "± half the 95% interval" where there is
// one (no range where there is not), and the exact interval, or why there
// is none, the trials and the target in its extra text.
func (d *Document) GitHubActionBenchmark(w io.Writer) error {
	out := []gabResult{}
	for _, p := range d.trackerPoints() {
		r := gabResult{Name: p.name, Unit: "ns", Value: p.value}
		var extra []string
		switch {
		case !math.IsNaN(p.lo):
			// Down to a tenth, so that twice it stays within the interval.
			r.Range = "± " + num(math.Floor((p.hi-p.lo)*5)/10)
			extra = append(extra, fmt.Sprintf("95%% interval %s to %s ns", num(p.lo), num(p.hi)))
		case p.trials < MinIntervalTrials:
			extra = append(extra, fmt.Sprintf("no interval (it takes %d trials)", MinIntervalTrials))
		}
		extra = append(extra, fmt.Sprintf("%d %s, %d events", p.trials, english.Plural(p.trials, "trial", "trials"), p.events),
			fmt.Sprintf("target %s, kernel %s", d.Target.Name, d.Environment.KernelRelease))
		r.Extra = strings.Join(extra, "\n")
		out = append(out, r)
	}
	return writeIndented(w, out)
}

// bmfMetric is one measure's value in Bencher's BMF JSON.
type bmfMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// Bencher writes Bencher Metric Format JSON: a benchmark per scenario,
// metric and percentile, its value in Bencher's built-in latency measure
// (ns), the 95% interval as lower_value and upper_value where there is
// one.
func (d *Document) Bencher(w io.Writer) error {
	out := map[string]map[string]bmfMetric{}
	for _, p := range d.trackerPoints() {
		m := bmfMetric{Value: p.value}
		if !math.IsNaN(p.lo) {
			lo, hi := p.lo, p.hi
			m.Lower, m.Upper = &lo, &hi
		}
		out[p.name] = map[string]bmfMetric{"latency": m}
	}
	return writeIndented(w, out)
}

// round keeps a tenth of a ns: the histogram resolves no finer, and the
// digits beyond would only churn the trackers' files.
func round(ns float64) float64 { return math.Round(ns*10) / 10 }

func writeIndented(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
