package render

import (
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
)

// WriteBands lays out the nuisance bands of a calibration in virtual time
// (report.SeedBands): a line each, saying which thresholds lie inside.
func WriteBands(w io.Writer, lines []report.BandLine, o TextOptions) error {
	if len(lines) == 0 {
		return nil
	}
	head := fmt.Sprintf("Nuisance bands across %s: how far each gated test moves across seeds alone, what layout and start phase make of one system (docs/vms.md).", english.Count(lines[0].Band.Seeds, "seeded boot"))
	out := wrapHanging(head, o.Width, 2)
	for _, l := range lines {
		line := fmt.Sprintf("  %s %s %s: ±%s", l.Scenario, l.Metric, l.Percentile, pct(l.Band.Fraction()))
		if l.Unreachable() {
			line += fmt.Sprintf("; its threshold %s is inside: unreachable, a gate never decides it", pct(l.Threshold))
		}
		out = append(out, line)
	}
	for _, l := range out {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
