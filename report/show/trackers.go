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
// estimates for that side where there is one (not for max).

// trackerPoint is one benchmark of a tracker: scenario/metric/percentile.
type trackerPoint struct {
	name   string
	value  float64
	lo, hi float64 // NaN when there is no interval
	trials int
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
				v, lo, hi := stats.PercentileOf(m.src, m.Name, p, 0)
				if math.IsNaN(v) {
					continue
				}
				out = append(out, trackerPoint{name: s.Name + "/" + m.Name + "/" + p.Name, value: v, lo: lo, hi: hi,
					trials: len(m.Trials), events: m.All.Count})
			}
		}
	}
	return out
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
// and percentile in ns, its range "± half the 95% interval" and the exact
// interval, trials and target in its extra text.
func (d *Document) GitHubActionBenchmark(w io.Writer) error {
	out := []gabResult{}
	for _, p := range d.trackerPoints() {
		r := gabResult{Name: p.name, Unit: "ns", Value: round(p.value)}
		var extra []string
		if !math.IsNaN(p.lo) && !math.IsNaN(p.hi) {
			r.Range = "± " + num(round((p.hi-p.lo)/2))
			extra = append(extra, fmt.Sprintf("95%% interval %s to %s ns", num(round(p.lo)), num(round(p.hi))))
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
// (ns), the 95% interval as lower_value and upper_value.
func (d *Document) Bencher(w io.Writer) error {
	out := map[string]map[string]bmfMetric{}
	for _, p := range d.trackerPoints() {
		m := bmfMetric{Value: round(p.value)}
		if !math.IsNaN(p.lo) && !math.IsNaN(p.hi) {
			lo, hi := round(p.lo), round(p.hi)
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
