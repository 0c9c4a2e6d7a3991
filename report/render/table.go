package render

import (
	"fmt"
	"slices"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// The comparison table, one layout for every format: metric, pctl, the
// reference's value, then a column group per target against it: its
// value, delta, 95% CI of the ratio, threshold and verdict. With two
// targets that is compare's baseline, candidate, delta, 95% CI,
// threshold, verdict.

// Narrowed, the metric heads its percentiles' rows, the verdict wraps,
// and the columns leave the row in this order: the threshold, the
// reference's value, the target's value, the interval. The delta and the
// verdict stay.
const (
	foldThreshold = 1 + iota
	foldReference
	foldValue
	foldCI
)

// tableHeader names the columns of m's table.
func tableHeader(m *report.Matrix) []string {
	h := []string{"metric", "pctl", column(m, 0)}
	for i := 1; i < len(m.Targets); i++ {
		h = append(h, column(m, i), "delta", "95% CI", "threshold", "verdict")
	}
	return h
}

// tableAlign aligns the columns of m's table.
func tableAlign(m *report.Matrix) []tw.Align {
	a := []tw.Align{left, left, right}
	for i := 1; i < len(m.Targets); i++ {
		a = append(a, right, right, left, right, left)
	}
	return a
}

// fitTable is scenario s of m as a table within width: of every target,
// or of those given (indexes of m.Targets after the reference).
func fitTable(m *report.Matrix, s report.MatrixScenario, width int, targets []int) *FitTable {
	header, align := tableHeader(m), tableAlign(m)
	keep := []int{0, 1, 2} // metric, pctl, the reference's value
	for i := 1; i < len(m.Targets); i++ {
		if targets == nil || slices.Contains(targets, i) {
			for k := range 5 {
				keep = append(keep, 3+5*(i-1)+k)
			}
		}
	}
	t := &FitTable{Width: width}
	for _, k := range keep {
		c := Column{Header: header[k], Align: align[k]}
		switch {
		case k == 0:
			c.Group = true
		case k == 2:
			c.Fold = foldReference
		case k > 2:
			// value, delta, 95% CI, threshold, verdict
			c.Fold = [5]int{foldValue, 0, foldCI, foldThreshold, 0}[(k-3)%5]
			if (k-3)%5 == 4 {
				c.Wrap = len("inconclusive")
			}
		}
		t.Columns = append(t.Columns, c)
	}
	for _, mm := range s.Metrics {
		for _, row := range mm.Rows {
			full := tableRow(mm.Name, row, verdictLabel)
			r := make([]string, len(keep))
			for j, k := range keep {
				r[j] = full[k]
			}
			t.Append(r)
		}
	}
	return t
}

// tableRow is one percentile of a metric, its verdicts worded by mark:
// the values the deltas are of (report.MatrixRow.Shown).
func tableRow(metric string, row report.MatrixRow, mark func(stats.Verdict) string) []string {
	shown := row.Shown()
	out := []string{metric, row.Quantile, FormatNs(shown[0])}
	for i, c := range row.Cells[1:] {
		value := FormatNs(shown[i+1])
		if v := c.Verdict; v != nil {
			out = append(out, value, FormatDelta(v.Ratio), ciLabel(*v), thresholdLabel(*v), mark(*v))
		} else {
			out = append(out, value, "-", "-", "-", "not compared")
		}
	}
	return out
}

// valuesNote says what the values of scenario s's table are when its
// deltas are paired rounds' estimates (report.MatrixRow.Shown), "" when
// they are ratios of the values themselves.
func valuesNote(m *report.Matrix, s report.MatrixScenario) string {
	rounds := s.PairedRounds()
	if len(rounds) == 0 {
		return ""
	}
	n := fmt.Sprint(rounds[0])
	if last := rounds[len(rounds)-1]; last != rounds[0] {
		n += "-" + fmt.Sprint(last)
	}
	ref, target, delta := column(m, 0), "candidate", "delta"
	if !m.TwoSided {
		ref, target, delta = m.Targets[0].Name, "a target", "its delta"
	}
	return fmt.Sprintf("values: %s = the median of its trials'; %s = %s × (1 + %s), the delta estimated from %s paired rounds",
		ref, target, ref, delta, n)
}
