// Package changes finds the commits where a percentile of main's history
// stepped: E-divisive means (Matteson and James 2014, as Apache Otava and
// MongoDB's signal processing use it) over each trial's quantile, split
// between commits, each change point tested on the commits (a
// permutation test, and Student's t backed by a permutation test of the
// trials; splitP), the family of series held to one
// false-alarm rate by Holm's procedure. The statistics (series.go,
// edivisive.go, changes.go) are pure; render.go and page.go only lay out
// what they returned.
package changes

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Key names one series: a percentile of a metric of a scenario on a
// target.
type Key struct {
	Target     string `json:"target"`
	Scenario   string `json:"scenario"`
	Metric     string `json:"metric"`
	Percentile string `json:"percentile"`
	// Clock and Params tell apart the series of one target, scenario,
	// metric and percentile whose records ran on other clocks
	// (history.ClockLabel) or with other parameters (a digest): what
	// compare refuses to mix, a series never mixes either, and a change
	// of them starts a new one. Each is "" when the records of those four
	// all agree on it.
	Clock  string `json:"clock,omitempty"`
	Params string `json:"params,omitempty"`
}

func (k Key) String() string {
	s := fmt.Sprintf("%s %s %s %s", k.Target, k.Scenario, k.Metric, k.Percentile)
	if k.Clock != "" {
		s += " [" + k.Clock + "]"
	}
	if k.Params != "" {
		s += " [params " + k.Params + "]"
	}
	return s
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Scenario, b.Scenario),
		cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Percentile, b.Percentile))
}

// base is k without what tells its epochs apart.
func (k Key) base() Key { k.Clock, k.Params = "", ""; return k }

// Point is one commit of a series: the percentile of each of its trials,
// their median, and the interval of that median.
type Point struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"`
	Record string    `json:"record"` // the record's path in the store
	// Trials are each trial's quantile, ns, in trial order.
	Trials []float64 `json:"trials"`
	// Center is the median of Trials; Lo and Hi bound it at 95% by the
	// order statistics (distribution-free; with fewer than six trials the
	// coverage is lower, and Lo, Hi are the extremes).
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Series is one percentile over commits, oldest first.
type Series struct {
	Key    Key     `json:"key"`
	Gated  bool    `json:"gated"` // the record's gate policy gates it
	Points []Point `json:"points"`
}

// Selection says which series to build: the metrics and percentiles
// named, or (empty) what each record's gate policy gates.
type Selection struct {
	Metrics     []string
	Percentiles []string
}

// Builder gathers series from records, one at a time, keeping only the
// quantiles: a record's histograms are not held once added.
type Builder struct {
	sel    Selection
	series map[Key]*Series
}

// NewBuilder returns a Builder for sel. The percentile names must be
// stats.Percentiles' (CheckSelection).
func NewBuilder(sel Selection) *Builder {
	return &Builder{sel: sel, series: map[Key]*Series{}}
}

// CheckSelection refuses a percentile report does not know.
func CheckSelection(sel Selection) error {
	for _, p := range sel.Percentiles {
		if _, ok := stats.LookupPercentile(p); !ok {
			return fmt.Errorf("unknown percentile %q (want p50, p90, p99, p99.9 or max)", p)
		}
	}
	return nil
}

// Add adds rec's points. Records must come in series order (the index's).
func (b *Builder) Add(rec *history.Record, path string) {
	b.AddSummary(history.Summarize(rec, ""), rec.Time, path)
}

// AddSummary adds the points of a record's summary, the record made at
// time at and stored at path. It reports false, and adds nothing, when
// the summary lacks a percentile the selection needs (read the record
// then, and Add it).
func (b *Builder) AddSummary(s *history.Summary, at time.Time, path string) bool {
	type add struct {
		k     Key
		gated bool
		pt    Point
	}
	var adds []add
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		policy, _ := stats.GatePolicy(&result.Scenario{Name: sc.Name, Gate: sc.Gate, Definition: sc.Definition})
		for _, mname := range sortedKeys(sc.Metrics) {
			if len(b.sel.Metrics) > 0 && !slices.Contains(b.sel.Metrics, mname) {
				continue
			}
			gated := policy[mname]
			if gated == nil {
				gated = policy["*"]
			}
			pcts := b.sel.Percentiles
			if len(pcts) == 0 {
				pcts = sortedKeys(gated)
			}
			for _, pname := range pcts {
				if _, ok := stats.LookupPercentile(pname); !ok {
					continue
				}
				xs, ok := sc.Metrics[mname][pname]
				if !ok {
					return false
				}
				if len(xs) == 0 {
					continue
				}
				pt := Point{Commit: s.Commit, Time: at, Record: path, Trials: slices.Clone(xs)}
				pt.Center, pt.Lo, pt.Hi = MedianInterval(pt.Trials, 0.95)
				_, isGated := gated[pname]
				adds = append(adds, add{Key{Target: s.Target, Scenario: sc.Name, Metric: mname, Percentile: pname, Clock: s.Clock, Params: shortParams(sc.Params)}, isGated, pt})
			}
		}
	}
	for _, a := range adds {
		sr := b.series[a.k]
		if sr == nil {
			sr = &Series{Key: a.k}
			b.series[a.k] = sr
		}
		sr.Gated = sr.Gated || a.gated
		sr.Points = append(sr.Points, a.pt)
	}
	return true
}

// Series returns the series gathered, in key order, the epochs of one
// target, scenario, metric and percentile in the order of their first
// points. A key names a clock or parameters only where the records of
// its four differ in them.
func (b *Builder) Series() []Series {
	clocks, params := map[Key]map[string]bool{}, map[Key]map[string]bool{}
	for k := range b.series {
		if clocks[k.base()] == nil {
			clocks[k.base()], params[k.base()] = map[string]bool{}, map[string]bool{}
		}
		clocks[k.base()][k.Clock] = true
		params[k.base()][k.Params] = true
	}
	var out []Series
	for k, s := range b.series {
		s := *s
		if len(clocks[k.base()]) == 1 {
			s.Key.Clock = ""
		}
		if len(params[k.base()]) == 1 {
			s.Key.Params = ""
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Series) int {
		return cmp.Or(compareKeys(a.Key, b.Key), a.Points[0].Time.Compare(b.Points[0].Time), cmp.Compare(a.Key.Clock, b.Key.Clock), cmp.Compare(a.Key.Params, b.Key.Params))
	})
	return out
}

// shortParams is a parameter digest as a key shows it.
func shortParams(p string) string { return p[:min(12, len(p))] }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// MedianInterval returns the median of xs and a distribution-free
// interval for it at confidence conf: the order statistics x(l), x(n+1−l)
// with l the largest rank whose binomial tail keeps the coverage. With
// too few values for conf, the interval is the range.
func MedianInterval(xs []float64, conf float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	if n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	// P(X < l) for X ~ Binomial(n, 1/2): the chance x(l) lies above the
	// median, the same for x(n+1−l) below it.
	l := 0 // 1-based rank; 0: none reaches conf
	tail := 0.0
	for k := 0; k < n/2; k++ {
		tail += binom(n, k) / math.Pow(2, float64(n))
		if 1-2*tail < conf {
			break
		}
		l = k + 1
	}
	if l == 0 {
		return med, s[0], s[n-1]
	}
	return med, s[l-1], s[n-l]
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
