package render

// The noise floor of an A/A comparison, laid out as a table: no command
// uses it; TestNoiseGolden keeps its layout.

import (
	"github.com/tailgate-ci/tailgate/report"
	"io"
	"math"
	"strconv"
)

// Noise is what an A/A comparison (the same target run twice) says about
// one metric and percentile: how far apart two runs land with nothing
// changed, and so the smallest threshold the gate can enforce.
type Noise struct {
	Scenario string
	Metric   string
	Quantile string
	Trials   int     // per side
	Delta    float64 // the A/A ratio minus 1: a difference with no change
	// HalfWidth is the larger half of the ratio's 95% interval: a real
	// shift smaller than it cannot move the interval off 1.
	HalfWidth float64
	// MinThreshold is the smallest threshold worth setting at this trial
	// count: max(HalfWidth, |Delta|), rounded up to a whole percent. Below
	// it, a regression cannot be confirmed or noise alone crosses it.
	MinThreshold float64
	// Threshold is the one in force (0 when not gated).
	Threshold float64
	Gated     bool
}

// BelowFloor reports whether the threshold in force is tighter than the
// gate can enforce.
func (n Noise) BelowFloor() bool { return n.Gated && n.Threshold < n.MinThreshold }

// NoiseFloor derives the noise floor from an A/A comparison.
func NoiseFloor(r *report.Report) []Noise {
	var out []Noise
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			h := math.Max(v.Ratio-v.Lo, v.Hi-v.Ratio)
			n := Noise{
				Scenario: s.Name, Metric: v.Metric, Quantile: v.Quantile,
				Trials: min(v.BaseTrials, v.CandTrials), Delta: v.Ratio - 1, HalfWidth: h,
				Threshold: v.Threshold, Gated: v.Gated,
			}
			// The epsilon keeps 0.02 from rounding up to 3% on float error.
			n.MinThreshold = math.Ceil(100*math.Max(h, math.Abs(n.Delta))-1e-9) / 100
			out = append(out, n)
		}
	}
	return out
}

// WriteNoiseText lays out a noise floor as a table.
func WriteNoiseText(w io.Writer, noise []Noise) error {
	t := NewTable(w, left, left, left, right, right, right, right, right, left)
	t.Header([]string{"scenario", "metric", "pctl", "trials", "A/A delta", "noise (CI ±)", "min threshold", "threshold", "note"})
	for _, n := range noise {
		th, note := "-", ""
		if n.Gated {
			th = FormatPercent(n.Threshold)
			if n.BelowFloor() {
				note = "below the noise floor: raise it or add trials"
			}
		}
		minT := "-"
		if !math.IsNaN(n.MinThreshold) {
			minT = FormatPercent(n.MinThreshold)
		}
		half := "-"
		if !math.IsNaN(n.HalfWidth) {
			half = "±" + FormatPercent(n.HalfWidth)
		}
		if err := t.Append([]string{n.Scenario, n.Metric, n.Quantile, strconv.Itoa(n.Trials), FormatDelta(1 + n.Delta), half, minT, th, note}); err != nil {
			return err
		}
	}
	return t.Render()
}
