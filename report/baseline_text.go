package report

import (
	"io"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/baseline"
)

// WriteBaselines lists stored baselines, a row per scenario and metric:
// target, kernel, trials, events and p99, and the file.
func WriteBaselines(w io.Writer, entries []baseline.Entry) error {
	t := NewTable(w, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft)
	t.Header([]string{"scenario", "target", "kernel", "trials", "metric", "events", "p99", "file"})
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
			if err := t.Append([]string{s.Name, e.Result.Target.Name, e.Result.Environment.KernelRelease,
				strconv.Itoa(s.Trials), name, events, p99, e.Path}); err != nil {
				return err
			}
		}
	}
	return t.Render()
}
