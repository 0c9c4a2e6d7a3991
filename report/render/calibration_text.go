package render

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// calibrationColumns are calibrate's columns. Narrowed, the scenario
// heads its rows and the spreads leave the row in the order they lead to
// the bound, which stays: it is what a gate adds.
var calibrationColumns = []Column{
	{Header: "scenario", Align: left, Group: true},
	{Header: "metric", Align: left},
	{Header: "pctl", Align: left},
	{Header: "within a run", Align: right, Fold: 1},
	{Header: "between runs", Align: right, Fold: 2},
	{Header: "excess", Align: right, Fold: 3},
	{Header: "excess, 90% bound", Align: right},
}

// WriteCalibrationText prints, per scenario of first, metric and
// percentile, the spread inside one run, between runs, and the excess a
// stored-baseline comparison adds, for the gated percentiles (the stored
// calibration has every percentile); cli are the command line's
// thresholds. Every line keeps to o.Width.
func WriteCalibrationText(w io.Writer, cal *stats.Calibration, first *result.Result, cli []stats.Threshold, o TextOptions) error {
	head := fmt.Sprintf("Between-run spread on %s (kernel %s): %d separate runs, nothing changed between them; the gated percentiles.", cal.Target, cal.KernelRelease, cal.Runs)
	for _, l := range wrapHanging(head, o.Width, 2) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	t := &FitTable{Columns: calibrationColumns, Width: o.Width}
	pct := func(sd float64) string {
		if math.IsNaN(sd) {
			return "-"
		}
		return fmt.Sprintf("±%.1f%%", 100*(math.Exp(sd)-1))
	}
	for _, s := range first.Scenarios {
		ms := cal.Scenarios[s.Name]
		var names []string
		for n := range ms {
			names = append(names, n)
		}
		slices.Sort(names)
		// The gated tests only: the others are reported, never judged, and
		// their spreads (of sparse sched metrics, say) say little.
		for _, n := range names {
			for _, p := range stats.PercentilesFor(s.Gate, cli) {
				sp, ok := ms[n][p.Name]
				if !ok {
					continue
				}
				if _, gated := stats.ResolveThreshold(n, p.Name, s.Gate, cli); !gated {
					continue
				}
				t.Append([]string{s.Name, n, p.Name, pct(sp.WithinSD), pct(sp.BetweenSD), pct(sp.ExcessSD), pct(sp.UpperSD)})
			}
		}
	}
	return t.Render(w)
}
