package show

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
)

// The layouts of the benchmark trackers' formats, over the points the
// model computed (Trackers, points.go).

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
func (t *Trackers) GitHubActionBenchmark(w io.Writer) error {
	out := []gabResult{}
	for _, p := range t.points {
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
			fmt.Sprintf("target %s, kernel %s", t.target, t.kernel))
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
func (t *Trackers) Bencher(w io.Writer) error {
	out := map[string]map[string]bmfMetric{}
	for _, p := range t.points {
		m := bmfMetric{Value: p.value}
		if !math.IsNaN(p.lo) {
			lo, hi := p.lo, p.hi
			m.Lower, m.Upper = &lo, &hi
		}
		out[p.name] = map[string]bmfMetric{"latency": m}
	}
	return writeIndented(w, out)
}

func writeIndented(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
