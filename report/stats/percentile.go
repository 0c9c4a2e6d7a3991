package stats

import (
	"math"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// Percentile is a quantile the gate reports, by name.
type Percentile struct {
	Name string  // "p50", "p90", "p99", "p99.9", "p95", "p99.99", "max"
	Q    float64 // 0.5 … 1
}

// Percentiles are the quantiles every comparison reports, in order. Any
// other (p95, p99.99) is reported where a gate policy or a threshold names
// it (PercentilesFor).
var Percentiles = []Percentile{
	{"p50", 0.5},
	{"p90", 0.9},
	{"p99", 0.99},
	{"p99.9", 0.999},
	{"max", 1},
}

// PercentileHelp says which names LookupPercentile takes, for errors.
const PercentileHelp = hist.PercentileNames

// LookupPercentile returns the percentile of the given name
// (hist.ParsePercentile).
func LookupPercentile(name string) (Percentile, bool) {
	for _, p := range Percentiles {
		if p.Name == name {
			return p, true
		}
	}
	q, ok := hist.ParsePercentile(name)
	if !ok {
		return Percentile{}, false
	}
	return Percentile{Name: name, Q: q}, true
}

// Of is p's value in h, ns: its largest event for max, NaN when h has no
// events.
func (p Percentile) Of(h *hist.Histogram) float64 {
	if h.Count() == 0 {
		return math.NaN()
	}
	if p.Q >= 1 {
		return float64(h.Max())
	}
	return h.Quantile(p.Q)
}
