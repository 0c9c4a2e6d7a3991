package render

import (
	"io"
	"strconv"

	"github.com/tailgate-ci/tailgate/internal/baseline"
)

// baselineColumns are baseline show's columns. Narrowed, the scenario
// heads its rows and the columns a reader needs least leave the row
// first: the file (its name is the scenario, target and kernel), the
// kernel, the events, the trials.
var baselineColumns = []Column{
	{Header: "scenario", Align: left, Group: true},
	{Header: "target", Align: left},
	{Header: "kernel", Align: left, Fold: 2},
	{Header: "trials", Align: right, Fold: 4},
	{Header: "metric", Align: left},
	{Header: "events", Align: right, Fold: 3},
	{Header: "p99", Align: right},
	{Header: "file", Align: left, Fold: 1},
}

// WriteBaselines lists stored baselines (baseline.Summarize), a row per
// scenario and metric: target, kernel, trials, events and p99, and the
// file; the table keeps to o.Width.
func WriteBaselines(w io.Writer, entries []baseline.Entry, o TextOptions) error {
	t := &FitTable{Columns: baselineColumns, Width: o.Width}
	for _, e := range baseline.Summarize(entries).Baselines {
		row := func(metric, events, p99 string) {
			t.Append([]string{e.Scenario, e.Target, e.KernelRelease, strconv.Itoa(e.Trials), metric, events, p99, e.File})
		}
		if len(e.Metrics) == 0 {
			row("", "-", "-")
		}
		for _, m := range e.Metrics {
			p99 := "-"
			if m.P99Ns != nil {
				p99 = FormatNs(*m.P99Ns)
			}
			row(m.Name, strconv.FormatUint(m.Events, 10), p99)
		}
	}
	return t.Render(w)
}
