package report

import (
	"math"

	"github.com/tailgate-ci/tailgate/report/stats"
)

// Counts tallies a report's verdicts.
type Counts struct {
	Gated, Regressions, Improvements, Inconclusive int
	// Unreachable are the inconclusive held for good, their thresholds
	// inside their nuisance bands (stats.HoldInsideBands).
	Unreachable int
}

// Tally counts the gated verdicts of r by kind.
func (r *Report) Tally() Counts {
	var c Counts
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated {
				continue
			}
			c.Gated++
			switch v.Kind {
			case stats.Regression:
				c.Regressions++
			case stats.Improvement:
				c.Improvements++
			case stats.Inconclusive:
				c.Inconclusive++
				if v.InsideBand() {
					c.Unreachable++
				}
			}
		}
	}
	return c
}

// Failed reports whether the gate fails: any regression, or with strict
// any inconclusive verdict too.
func (r *Report) Failed(strict bool) bool {
	c := r.Tally()
	return c.Regressions > 0 || (strict && c.Inconclusive > 0)
}

// Decided reports whether every gated test of r is decided: a regression,
// an improvement or no change, or held undecided for good, its threshold
// inside its nuisance band (stats.HoldInsideBands). A sequential gate
// run stops when it is.
func (r *Report) Decided() bool {
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if v.Gated && !v.Decided() && !v.InsideBand() {
				return false
			}
		}
	}
	return true
}

// Stopping says whether a gate run stops after r's look (see stats.Sequential):
// when every gated test is decided, when a regression is confirmed, when
// it was a single look, or when budgetSpent. A caller that wants every
// test decided even after a regression goes on while !r.Decided().
func (r *Report) Stopping(budgetSpent bool) Stopping {
	return stopping([]*Report{r}, budgetSpent)
}

func stopping(reps []*Report, budgetSpent bool) Stopping {
	st := Stopping{Trials: -1}
	for _, r := range reps {
		st.Look = r.Look
		for _, s := range r.Scenarios {
			for _, v := range s.Verdicts {
				if !v.Gated {
					continue
				}
				st.Gated++
				if !v.Decided() && !v.InsideBand() {
					st.Undecided++
				}
				if v.Kind == stats.Regression {
					st.Regressions++
				}
				if n := min(v.BaseTrials, v.CandTrials); st.Trials < 0 || n < st.Trials {
					st.Trials = n
				}
			}
		}
	}
	st.Trials = max(st.Trials, 0)
	switch {
	case st.Undecided == 0:
		st.Stop, st.Reason = true, StopDecided
	case st.Regressions > 0:
		st.Stop, st.Reason = true, StopRegression
	case st.Look == 0:
		st.Stop, st.Reason = true, StopSingleLook
	case budgetSpent:
		st.Stop, st.Reason = true, StopBudget
	}
	return st
}

// Detection is what a gated test could have caught: the smallest shift,
// as a fraction, it would have called at the level it was judged at
// (stats.Verdict.Detectable), beside its threshold.
type Detection struct {
	Scenario, Metric, Percentile string
	Detectable, Threshold        float64
	// Rounds (paired) or Trials (the fewer of the two sides) behind it.
	Rounds, Trials int
}

// Blunt reports whether the test could not have caught a shift of its
// own threshold: what it would call is larger.
func (d Detection) Blunt() bool { return d.Detectable > d.Threshold*1.0001 }

// Detections lists every gated test's Detection, in report order; tests
// without one (no level, no interval) are left out.
func (r *Report) Detections() []Detection {
	var out []Detection
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated || math.IsNaN(v.Detectable) || v.Detectable <= 0 {
				continue
			}
			out = append(out, Detection{Scenario: s.Name, Metric: v.Metric, Percentile: v.Quantile, Detectable: v.Detectable, Threshold: v.Threshold, Rounds: v.Rounds, Trials: min(v.BaseTrials, v.CandTrials)})
		}
	}
	return out
}
