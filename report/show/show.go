// Package show lays a Result out for reading and for other tools: per
// scenario and metric, the distribution of all trials merged as bcc-style
// power-of-two (or fixed-width) histogram rows, its percentiles, and each
// trial's. The Document is built once from the Result; each output format
// is a method on it (Text, JSON, CSV, OpenMetrics, Benchstat), or on the
// Trackers it computes (GitHubActionBenchmark, Bencher), so the formats
// cannot disagree. Nothing here judges: percentiles are read from
// the histograms, which stay the truth.
package show

import (
	"errors"
	"fmt"
	"github.com/tailgate-ci/tailgate/report"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// SchemaVersion is the version of the JSON document Document.JSON writes.
const SchemaVersion = 1

// Document is a Result laid out per scenario and metric.
type Document struct {
	Target      result.Target      `json:"target"`
	Environment result.Environment `json:"environment"`
	Partial     bool               `json:"partial,omitempty"`
	Scenarios   []Scenario         `json:"scenarios"`
}

// Scenario is one scenario's metrics: gated ones first, then by name.
type Scenario struct {
	Name    string   `json:"name"`
	Trials  int      `json:"trials"`
	Metrics []Metric `json:"metrics"`
}

// Metric is one metric over all the scenario's trials.
type Metric struct {
	Name  string `json:"name"`
	Unit  string `json:"unit"`
	Gated bool   `json:"gated"`
	// All is the percentiles of the trials' histograms merged.
	All    result.Summary `json:"all"`
	MinNs  uint64         `json:"min_ns"`
	SumNs  float64        `json:"sum_ns"`
	Trials []Trial        `json:"trials"`

	merged *hist.Histogram
	src    *result.Metric
}

// Trial is one trial's percentiles and throughput.
type Trial struct {
	N         int            `json:"n"` // 1-based
	Summary   result.Summary `json:"summary"`
	Ops       uint64         `json:"ops"`
	DurationS float64        `json:"duration_s"`
}

// New builds the Document of r.
func New(r *result.Result) *Document {
	d := &Document{Target: r.Target, Environment: r.Environment, Partial: r.Partial}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		gate, _ := report.GatePolicy(s)
		sc := Scenario{Name: s.Name, Trials: s.Trials}
		for name, m := range s.Metrics {
			merged := m.Merged()
			sm := Metric{Name: name, Unit: m.Unit, Gated: gated(name, gate), All: result.Summarize(merged), merged: merged, src: m}
			if merged.Count() > 0 {
				sm.MinNs, sm.SumNs = merged.Min(), merged.Mean()*float64(merged.Count())
			}
			for j, t := range m.Trials {
				sm.Trials = append(sm.Trials, Trial{N: j + 1, Summary: t.Summary, Ops: t.Ops, DurationS: t.Duration})
			}
			sc.Metrics = append(sc.Metrics, sm)
		}
		slices.SortFunc(sc.Metrics, func(a, b Metric) int {
			switch {
			case a.Gated && !b.Gated:
				return -1
			case b.Gated && !a.Gated:
				return 1
			case a.Name < b.Name:
				return -1
			case a.Name > b.Name:
				return 1
			}
			return 0
		})
		d.Scenarios = append(d.Scenarios, sc)
	}
	return d
}

// gated says the gate policy gates metric at some percentile.
func gated(metric string, gate map[string]map[string]float64) bool {
	for _, p := range stats.Percentiles {
		if _, ok := stats.ResolveThreshold(metric, p.Name, gate, nil); ok {
			return true
		}
	}
	return false
}

// Row is one histogram row: Count events in [Lo, Hi) ns. Below and Above
// mark the open rows of a linear layout (values under its range, at or
// over it).
type Row struct {
	Lo, Hi       uint64
	Count        uint64
	Below, Above bool
}

// Log2 returns the power-of-two rows from the lowest to the highest that
// holds events, as bcc's print_log2_hist: [0, 1), [1, 2), [2, 4), ...
// The histogram's buckets nest in powers of two, so the counts are exact.
func (m *Metric) Log2() []Row {
	var rows []Row
	counts := m.merged.Counts()
	for i, n := range counts {
		if n == 0 {
			continue
		}
		lo, _ := hist.Bounds(i)
		k := 0 // row of [0, 1)
		if lo > 0 {
			k = bits.Len64(lo) // row of [2^(k-1), 2^k)
		}
		for len(rows) <= k {
			j := len(rows)
			r := Row{}
			if j > 0 {
				r.Lo, r.Hi = 1<<(j-1), 1<<j
			} else {
				r.Hi = 1
			}
			rows = append(rows, r)
		}
		rows[k].Count += n
	}
	// Start at the first row with events.
	for len(rows) > 0 && rows[0].Count == 0 {
		rows = rows[1:]
	}
	return rows
}

// Linear is a fixed-width layout: rows of Step ns from Min to Max, and a
// row each for what falls below and above.
type Linear struct {
	Min, Max, Step uint64
}

// Check says what is wrong with l, if anything.
func (l Linear) Check() error {
	switch {
	case l.Step == 0:
		return fmt.Errorf("step must be above 0")
	case l.Max <= l.Min:
		return fmt.Errorf("max must be above min")
	case (l.Max-l.Min)/l.Step > 1000:
		return fmt.Errorf("%d rows; at most 1000: widen the step", (l.Max-l.Min)/l.Step)
	}
	return nil
}

// ParseLinear reads MIN:MAX:STEP, three durations ("0" allowed).
func ParseLinear(s string) (Linear, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Linear{}, errors.New("want MIN:MAX:STEP, e.g. 0:20us:1us")
	}
	var ns [3]uint64
	for i, p := range parts {
		if p == "0" {
			continue
		}
		d, err := time.ParseDuration(p)
		if err != nil || d < 0 {
			return Linear{}, fmt.Errorf("%q: want a duration such as 500ns or 20us", p)
		}
		ns[i] = uint64(d)
	}
	l := Linear{Min: ns[0], Max: ns[1], Step: ns[2]}
	return l, l.Check()
}

// Linear returns l's rows. Each histogram bucket is counted where its
// midpoint falls, so a row's count is off by at most the events of the
// buckets that straddle its edges (a bucket is at most 1/64 of its value
// wide).
func (m *Metric) Linear(l Linear) []Row {
	n := int((l.Max - l.Min + l.Step - 1) / l.Step)
	rows := make([]Row, n+2)
	rows[0] = Row{Hi: l.Min, Below: true}
	for i := range n {
		lo := l.Min + uint64(i)*l.Step
		rows[i+1] = Row{Lo: lo, Hi: min(lo+l.Step, l.Max)}
	}
	rows[n+1] = Row{Lo: l.Max, Above: true}
	for i, c := range m.merged.Counts() {
		if c == 0 {
			continue
		}
		v := hist.Mid(i)
		switch {
		case v < float64(l.Min):
			rows[0].Count += c
		case v >= float64(l.Max):
			rows[n+1].Count += c
		default:
			rows[1+int((uint64(v)-l.Min)/l.Step)].Count += c
		}
	}
	return rows
}

// The OpenMetrics histogram's buckets are one set, whatever the data, so
// that Prometheus can add the histograms of different runs and hosts (sum
// by (le)) and histogram_quantile reads the sum: tailgate's log-linear
// layout coarsened to 2^omSubBits buckets per power of two from 2^omMinExp
// to 2^omMaxExp ns, below them one bucket for everything under 2^omMinExp,
// above them +Inf. Each coarse bucket is a union of whole buckets of the
// Result's (which split every power of two in 64), so its count is exact.
const (
	omSubBits = 2  // a bucket is at most a quarter of its value wide
	omMinExp  = 6  // 64 ns, where the Result's unit-wide buckets end
	omMaxExp  = 36 // about 68.7 s
)

// OpenMetricsBounds returns the upper bounds (ns, inclusive: the largest
// value each bucket holds) of the OpenMetrics histogram, +Inf left out.
func OpenMetricsBounds() []uint64 {
	bounds := []uint64{1<<omMinExp - 1}
	for e := omMinExp; e < omMaxExp; e++ {
		for j := uint64(1); j <= 1<<omSubBits; j++ {
			bounds = append(bounds, (1<<omSubBits+j)<<(e-omSubBits)-1)
		}
	}
	return bounds
}

// Cumulative returns, for each of OpenMetricsBounds, the events of the
// merged histogram at or below it.
func (m *Metric) Cumulative() []uint64 {
	bounds := OpenMetricsBounds()
	per := make([]uint64, len(bounds))
	for i, c := range m.merged.Counts() {
		if c == 0 {
			continue
		}
		lo, w := hist.Bounds(i)
		// The first bound at or above the bucket's largest value; the
		// bucket nests in it. Beyond the last bound: +Inf only.
		if k, _ := slices.BinarySearch(bounds, lo+w-1); k < len(bounds) {
			per[k] += c
		}
	}
	var total uint64
	for k := range per {
		total += per[k]
		per[k] = total
	}
	return per
}
