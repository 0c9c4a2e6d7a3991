// Package judgetest holds the judge's rule read backwards, for tests: the
// kinds of verdict stats.JudgeFamily could give on the figures a report
// shows. Verdicts built by hand as fixtures, and the goldens rendered
// from them, are held to it.
package judgetest

import (
	"fmt"
	"math"

	"github.com/tailgate-ci/tailgate/report/stats"
)

// EquivalenceReach is the least share of the way from the estimate to a
// bound of the 95% interval a report shows (log scale) that the bound
// "no change" tests reaches: that bound is one-sided at 1−DefaultBeta or
// beyond, and t's 95% quantile is at least half its 97.5% one (6.31 and
// 12.71 at one degree of freedom; 0.84 of it for the normal).
const EquivalenceReach = 0.5

// Possible says why stats.JudgeFamily could not have given v its kind on
// the figures v holds (a report's ratio, interval, threshold and
// warnings), nil when it could. It is the judge's rule read backwards, for
// verdicts made by hand as fixtures and for rendered reports:
//   - a decided verdict (regression, improvement, no change) has an
//     interval, and no side short of events beyond its percentile;
//   - a regression is past +threshold with the interval above 1 (Holm's
//     levels are at most DefaultAlpha = 1%, one-sided, inside the 2.5%
//     a 95% interval leaves above); an improvement mirrors it;
//   - "no change" is inside ±threshold, and so are the bounds its test
//     reaches, at least EquivalenceReach of the way to the interval's;
//   - a verdict is "not gated" exactly when it has no threshold.
func Possible(v stats.Verdict) error {
	if (v.Kind == stats.NotGated) != !v.Gated {
		return fmt.Errorf("%s but gated %v", v.Kind, v.Gated)
	}
	switch v.Kind {
	case stats.Regression, stats.Improvement, stats.NoChange:
	default:
		return nil
	}
	t := v.Threshold
	if !(v.Lo > 0) || !(v.Hi >= v.Lo) || math.IsInf(v.Hi, 0) {
		return fmt.Errorf("%s with no interval (%g, %g)", v.Kind, v.Lo, v.Hi)
	}
	for _, w := range v.Warnings {
		if w.Kind == stats.WarnFewTailEvents || w.Kind == stats.WarnNoEvents {
			return fmt.Errorf("%s beside the warning %q: too few events decide nothing", v.Kind, w.Kind)
		}
	}
	switch v.Kind {
	case stats.Regression:
		if !(v.Ratio > 1+t) || !(v.Lo > 1) {
			return fmt.Errorf("regression at ×%.4g [×%.4g, ×%.4g] against ±%g%%: needs the ratio past +threshold and the interval above 1", v.Ratio, v.Lo, v.Hi, 100*t)
		}
	case stats.Improvement:
		if !(v.Ratio < 1-t) || !(v.Hi < 1) {
			return fmt.Errorf("improvement at ×%.4g [×%.4g, ×%.4g] against ±%g%%: needs the ratio past -threshold and the interval below 1", v.Ratio, v.Lo, v.Hi, 100*t)
		}
	case stats.NoChange:
		c := math.Log(v.Ratio)
		lo := c - EquivalenceReach*(c-math.Log(v.Lo))
		hi := c + EquivalenceReach*(math.Log(v.Hi)-c)
		if !(math.Exp(hi) < 1+t) || !(math.Exp(lo) > 1-t) {
			return fmt.Errorf("no change at ×%.4g [×%.4g, ×%.4g] against ±%g%%: the bounds its test reaches, ×%.4g and ×%.4g or beyond, are not inside", v.Ratio, v.Lo, v.Hi, 100*t, math.Exp(lo), math.Exp(hi))
		}
	}
	return nil
}
