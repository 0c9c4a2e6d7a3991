// Package changepoint finds the commits where a percentile of main's history
// stepped: E-divisive means (Matteson and James 2014, as Apache Otava and
// MongoDB's signal processing use it) over each trial's quantile, split
// between commits, each change point tested on the commits (a
// permutation test, and Student's t backed by a permutation test of the
// trials; splitP), the family of series held to one
// false-alarm rate by Holm's procedure. It sees only numbers: series
// in, a Report with typed warnings out. engine reads the series from a
// history store (report.SeriesBuilder builds them), report/render lays
// the Report out.
package changepoint

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
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

// CompareKeys orders keys by target, scenario, metric and percentile.
func CompareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Scenario, b.Scenario),
		cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Percentile, b.Percentile))
}

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
