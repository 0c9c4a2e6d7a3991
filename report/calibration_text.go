package report

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// WriteCalibrationText prints, per scenario of first, metric and
// percentile, the spread inside one run, between runs, and the excess a
// stored-baseline comparison adds, for the gated percentiles (the stored
// calibration has every percentile); cli are the command line's
// thresholds.
func WriteCalibrationText(w io.Writer, cal *Calibration, first *result.Result, cli []Threshold) error {
	fmt.Fprintf(w, "Between-run spread on %s (kernel %s): %d separate runs, nothing changed between them.\n", cal.Target, cal.KernelRelease, cal.Runs)
	t := NewTable(w)
	t.Header([]string{"scenario", "metric", "pctl", "gated", "within a run", "between runs", "excess", "excess, 90% bound"})
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
			for _, p := range percentilesFor(s.Gate, cli) {
				sp, ok := ms[n][p.Name]
				if !ok {
					continue
				}
				if _, gated := ResolveThreshold(n, p.Name, s.Gate, cli); !gated {
					continue
				}
				if err := t.Append([]string{s.Name, n, p.Name, "yes", pct(sp.WithinSD), pct(sp.BetweenSD), pct(sp.ExcessSD), pct(sp.UpperSD)}); err != nil {
					return err
				}
			}
		}
	}
	return t.Render()
}
