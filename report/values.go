package report

import (
	"math"
	"slices"

	"github.com/tailgate-ci/tailgate/report/stats"
)

// What a table shows beside a delta. Two samples of trials: the
// quantiles the ratio is of, so each value over the reference's is the
// delta. Paired rounds (a same-job gate): the ratio is the rounds' own
// estimate, not a ratio of two values, and each side's median per-trial
// quantile can lie on the other side of the reference's from it
// (docs/statistics.md). There the reference shows its median per-trial
// quantile and
// the target that times the ratio, and the report says so
// (MatrixScenario.PairedRounds): a value lower than the reference's is
// never called slower.

// VerdictValues are v's baseline and candidate values as a report shows
// them beside its delta.
func VerdictValues(v stats.Verdict) (base, cand float64) {
	if v.Rounds > 0 && v.Ratio > 0 && !math.IsInf(v.Ratio, 0) {
		return v.Base, v.Base * v.Ratio
	}
	return v.Base, v.Cand
}

// Shown is what a table shows of each target's percentile, in Cells order
// (NaN where a target lacks it): each cell's Value, except where
// verdicts pair rounds, whose values are their VerdictValues.
func (row MatrixRow) Shown() []float64 {
	out := make([]float64, len(row.Cells))
	for i, c := range row.Cells {
		out[i] = math.NaN()
		if c.Present {
			out[i] = c.Value
		}
	}
	for i, c := range row.Cells {
		if v := c.Verdict; v != nil && v.Rounds > 0 {
			out[0], out[i] = VerdictValues(*v)
		}
	}
	return out
}

// PairedRounds lists, ascending, the counts of rounds behind the
// scenario's paired verdicts: none when no verdict pairs rounds, so that
// its table's values are the quantiles its deltas are ratios of.
func (s MatrixScenario) PairedRounds() []int {
	var out []int
	for _, mm := range s.Metrics {
		for _, row := range mm.Rows {
			for _, c := range row.Cells {
				if v := c.Verdict; v != nil && v.Rounds > 0 && !slices.Contains(out, v.Rounds) {
					out = append(out, v.Rounds)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
