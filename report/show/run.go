package show

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// RenderRun writes one table per scenario of a Result: each metric's event
// count and percentiles over all trials merged, the workload's throughput
// and the tracer's cost per program run. Gated metrics come first; metrics
// without events are named on one line below the table.
func RenderRun(w io.Writer, r *result.Result) error {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		fmt.Fprintf(w, "%s (%d %s, %s on %s)\n", s.Name, s.Trials, english.Plural(s.Trials, "trial", "trials"), r.Target.Name, r.Environment.KernelRelease)
		gate, _ := stats.GatePolicy(s)
		names := make([]string, 0, len(s.Metrics))
		var empty []string
		for n, m := range s.Metrics {
			if m.Merged().Count() == 0 {
				empty = append(empty, n)
				continue
			}
			names = append(names, n)
		}
		slices.Sort(empty)
		sortGatedFirst(names, func(n string) bool { return gated(n, gate) })
		if len(names) > 0 {
			left, right := tw.AlignLeft, tw.AlignRight
			t := render.NewTable(w, left, right, right, right, right, right, right, right, right)
			t.Header([]string{"metric", "count", "ops/s", "p50", "p90", "p99", "p99.9", "max", "bpf cost/run"})
			for _, n := range names {
				m := s.Metrics[n]
				sum := result.Summarize(m.Merged())
				cost := "-"
				var c, ops, secs float64
				for _, tr := range m.Trials {
					c += tr.TracerCostNs
					ops += float64(tr.Ops)
					secs += tr.Duration
				}
				if c > 0 {
					cost = render.FormatNs(c / float64(len(m.Trials)))
				}
				// No op counted (an exec command without ops that every
				// trial's end cut) reads "-", never a rate of 0.
				rate := "-"
				if secs > 0 && ops > 0 {
					rate = render.FormatRate(ops / secs)
				}
				if err := t.Append([]string{n, fmt.Sprint(sum.Count), rate, render.FormatNs(sum.P50), render.FormatNs(sum.P90),
					render.FormatNs(sum.P99), render.FormatNs(sum.P999), render.FormatNs(sum.Max), cost}); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		if len(empty) > 0 {
			fmt.Fprintf(w, "no events: %s\n", strings.Join(empty, ", "))
		}
		// Both sides are this run: the warnings name no side.
		for _, warn := range report.SteppedWarnings(s, s) {
			fmt.Fprintf(w, "note: %s\n", render.WarningText(warn))
		}
		fmt.Fprintln(w)
	}
	if r.Target.ClockOf() == result.ClockVirtual {
		fmt.Fprintf(w, "note: %s\n", render.VirtualTimeLine(fmt.Sprint(r.Target.Shift())))
	}
	if r.Partial {
		fmt.Fprintf(w, "partial result: %s\n", r.Error)
	}
	return nil
}

// sortGatedFirst sorts metric names by name, the gated ones first: what
// decides the gate leads the table.
func sortGatedFirst(names []string, gated func(string) bool) {
	slices.SortFunc(names, func(a, b string) int {
		ga, gb := gated(a), gated(b)
		switch {
		case ga && !gb:
			return -1
		case gb && !ga:
			return 1
		}
		return strings.Compare(a, b)
	})
}
