package report

import (
	"io"
	"slices"
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

// WriteBaselines lists stored baselines, a row per scenario and metric:
// target, kernel, trials, events and p99, and the file; the table keeps
// to o.Width.
func WriteBaselines(w io.Writer, entries []baseline.Entry, o TextOptions) error {
	t := &FitTable{Columns: baselineColumns, Width: o.Width}
	for _, e := range entries {
		s := e.Scenario()
		names := make([]string, 0, len(s.Metrics))
		for name := range s.Metrics {
			names = append(names, name)
		}
		slices.Sort(names)
		if len(names) == 0 {
			names = []string{""}
		}
		for _, name := range names {
			events, p99 := "-", "-"
			if m := s.Metrics[name]; m != nil {
				h := m.Merged()
				events = strconv.FormatUint(h.Count(), 10)
				p99 = FormatNs(h.Quantile(0.99))
			}
			t.Append([]string{s.Name, e.Result.Target.Name, e.Result.Environment.KernelRelease,
				strconv.Itoa(s.Trials), name, events, p99, e.Path})
		}
	}
	return t.Render(w)
}
