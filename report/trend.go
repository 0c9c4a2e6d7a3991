package report

import (
	"math"
	"time"
)

// Trend is one gated percentile's recent history on a branch (main's
// last commits, read from a history store by changes.Trends) with the
// candidate's value beside it: the line a pull request's report shows
// under its verdicts, so that a reader sees whether the head is where
// main has been lately, not only against one base.
type Trend struct {
	Scenario, Metric, Quantile string
	// Target is the history's target the values are of; Ref the branch.
	Target, Ref string
	// Candidate is the name of the compared candidate (the pair's
	// Cand.Target) the trend is drawn for; "" stands for every pair's.
	Candidate string
	// Commits are the branch's last commits that have the percentile,
	// oldest first, Times their commit times and Values each one's
	// median over its trials, ns.
	Commits []string
	Times   []time.Time
	Values  []float64
	// Cand is the candidate's value, taken as the history's are (the
	// median over its trials); NaN when it has none.
	Cand float64
}

// Min and Max are the range of the history's values (NaN when empty).
func (t Trend) Min() float64 { return extreme(t.Values, math.Min) }

// Max: see Min.
func (t Trend) Max() float64 { return extreme(t.Values, math.Max) }

func extreme(xs []float64, f func(a, b float64) float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	v := xs[0]
	for _, x := range xs[1:] {
		v = f(v, x)
	}
	return v
}

// Place is where the candidate falls among the history's values: how
// many are below it and how many above (the rest are equal).
func (t Trend) Place() (below, above int) {
	for _, v := range t.Values {
		switch {
		case v < t.Cand:
			below++
		case v > t.Cand:
			above++
		}
	}
	return below, above
}
