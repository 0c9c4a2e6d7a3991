package report

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// NewTable returns the house terminal table: plain ASCII borders (they
// survive CI logs and copy-paste), headers as written, one alignment per
// column.
func NewTable(w io.Writer, align ...tw.Align) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
}

// Column alignments, short names for table layouts.
const (
	left  = tw.AlignLeft
	right = tw.AlignRight
)

// The comparison table, one layout for every format: metric, pctl, the
// reference's value, then a column group per target against it: its
// value, delta, 95% CI of the ratio, threshold and verdict. With two
// targets that is compare's baseline, candidate, delta, 95% CI,
// threshold, verdict.

// tableHeader names the columns of m's table.
func (m *Matrix) tableHeader() []string {
	h := []string{"metric", "pctl", m.column(0)}
	for i := 1; i < len(m.Targets); i++ {
		h = append(h, m.column(i), "delta", "95% CI", "threshold", "verdict")
	}
	return h
}

// tableAlign aligns the columns of m's table.
func (m *Matrix) tableAlign() []tw.Align {
	a := []tw.Align{left, left, right}
	for i := 1; i < len(m.Targets); i++ {
		a = append(a, right, right, left, right, left)
	}
	return a
}

// tableRow is one percentile of a metric, its verdicts worded by mark.
func tableRow(metric string, row MatrixRow, mark func(Verdict) string) []string {
	out := []string{metric, row.Quantile, cellValue(row.Cells[0])}
	for _, c := range row.Cells[1:] {
		if v := c.Verdict; v != nil {
			out = append(out, cellValue(c), FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(*v), mark(*v))
		} else {
			out = append(out, cellValue(c), "-", "-", "-", "not compared")
		}
	}
	return out
}

func cellValue(c MatrixCell) string {
	if !c.Present {
		return "-"
	}
	return FormatNs(c.Value)
}
