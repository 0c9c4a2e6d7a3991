package result

import (
	"maps"
	"slices"
)

// GatePolicy is what a run gates: a metric name, or "*" for every metric
// the policy does not name, to a percentile ("p50", "p99.9", any pN as
// hist.ParsePercentile reads it, or "max") to its threshold as a fraction
// (0.10 for 10%). What it does not name is reported, not gated. A
// scenario's gate block is one; so is Scenario.Gate of a Result.
type GatePolicy map[string]map[string]float64

// Clone returns a copy of g that shares nothing with it; nil stays nil.
func (g GatePolicy) Clone() GatePolicy {
	if g == nil {
		return nil
	}
	out := make(GatePolicy, len(g))
	for m, ps := range g {
		out[m] = maps.Clone(ps)
	}
	return out
}

// MetricNames returns the names of the metrics of every scenario in rs,
// sorted, each once.
func MetricNames(rs ...*Result) []string {
	var out []string
	for _, r := range rs {
		for _, s := range r.Scenarios {
			for name := range s.Metrics {
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
