package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// RenderRun writes one table per scenario of a Result: each metric's event
// count and percentiles over all trials merged, and the tracer's cost per
// program run.
func RenderRun(w io.Writer, r *result.Result) error {
	for _, s := range r.Scenarios {
		fmt.Fprintf(w, "%s (%d %s, %s on %s)\n", s.Name, s.Trials, plural(s.Trials, "trial", "trials"), r.Target.Name, r.Environment.KernelRelease)
		t := NewTable(w, left, right, right, right, right, right, right, right)
		t.Header([]string{"metric", "count", "p50", "p90", "p99", "p99.9", "max", "bpf cost/run"})
		names := make([]string, 0, len(s.Metrics))
		for n := range s.Metrics {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m := s.Metrics[n]
			sum := result.Summarize(m.Merged())
			cost := "-"
			var c float64
			for _, tr := range m.Trials {
				c += tr.TracerCostNs
			}
			if c > 0 {
				cost = FormatNs(c / float64(len(m.Trials)))
			}
			if sum.Count == 0 {
				if err := t.Append([]string{n, "0", "-", "-", "-", "-", "-", cost}); err != nil {
					return err
				}
				continue
			}
			if err := t.Append([]string{n, fmt.Sprint(sum.Count), FormatNs(sum.P50), FormatNs(sum.P90),
				FormatNs(sum.P99), FormatNs(sum.P999), FormatNs(sum.Max), cost}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if r.Partial {
		fmt.Fprintf(w, "partial result: %s\n", r.Error)
	}
	return nil
}
