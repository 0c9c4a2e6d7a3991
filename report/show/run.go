package show

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
)

// RenderRun writes one table per scenario of a Result: each metric's event
// count and percentiles over all trials merged, and the tracer's cost per
// program run; the workload's throughput is the scenario's, in its
// heading. Gated metrics come first; metrics without events are named on
// one line below the table. Every line keeps to width (termwidth; 0 for
// no limit): a table too wide is laid out narrower (render.FitTable).
func RenderRun(w io.Writer, r *result.Result, width int) error {
	line := func(s string) {
		for _, l := range render.Wrap(s, width, 4) {
			fmt.Fprintln(w, l)
		}
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		head := fmt.Sprintf("%s (%d %s, %s on %s", s.Name, s.Trials, english.Plural(s.Trials, "trial", "trials"), r.Target.Name, r.Environment.KernelRelease)
		// No op counted (an exec command without ops that every trial's
		// end cut) says no rate, never a rate of 0.
		if rate := opsRate(s); rate > 0 {
			head += ", " + render.FormatRate(rate) + " ops/s"
		}
		line(head + ")")
		names, empty := runMetrics(s)
		if len(names) > 0 {
			if err := runTable(s, names, width).Render(w); err != nil {
				return err
			}
		}
		if len(empty) > 0 {
			line("no events: " + strings.Join(empty, ", "))
		}
		// Both sides are this run: the warnings name no side.
		for _, warn := range report.SteppedWarnings(s, s) {
			line("note: " + render.WarningText(warn))
		}
		fmt.Fprintln(w)
	}
	if r.Target.Virtual() {
		line("note: " + render.VirtualTimeLine(fmt.Sprint(r.Target.Shift())))
	}
	if r.Partial {
		line("partial result: " + r.Error)
	}
	return nil
}

// runMetrics is s's metrics with events, the gated first, and those
// without, by name.
func runMetrics(s *result.Scenario) (names, empty []string) {
	gate, _ := report.GatePolicy(s)
	for n, m := range s.Metrics {
		if m.Merged().Count() == 0 {
			empty = append(empty, n)
			continue
		}
		names = append(names, n)
	}
	slices.Sort(empty)
	sortGatedFirst(names, func(n string) bool { return gated(n, gate) })
	return names, empty
}

// opsRate is the workload's operations per second over s's trials: every
// metric of a trial counts the same workload's, so the first metric with
// trials says it. 0 when no op was counted.
func opsRate(s *result.Scenario) float64 {
	for _, n := range slices.Sorted(maps.Keys(s.Metrics)) {
		var ops, secs float64
		for _, tr := range s.Metrics[n].Trials {
			ops += float64(tr.Ops)
			secs += tr.Duration
		}
		if secs > 0 && len(s.Metrics[n].Trials) > 0 {
			if ops == 0 {
				return 0
			}
			return ops / secs
		}
	}
	return 0
}

// runTable is the table of s's metrics names, within width: narrower,
// the tracer's cost and then the count leave the row for lines beneath.
func runTable(s *result.Scenario, names []string, width int) *render.FitTable {
	t := &render.FitTable{Width: width, Columns: []render.Column{
		{Header: "metric"}, {Header: "count", Align: tw.AlignRight, Fold: 2},
		{Header: "p50", Align: tw.AlignRight}, {Header: "p90", Align: tw.AlignRight},
		{Header: "p99", Align: tw.AlignRight}, {Header: "p99.9", Align: tw.AlignRight},
		{Header: "max", Align: tw.AlignRight}, {Header: "bpf cost", Align: tw.AlignRight, Fold: 1},
	}}
	for _, n := range names {
		m := s.Metrics[n]
		sum := result.Summarize(m.Merged())
		cost := "-"
		var c float64
		for _, tr := range m.Trials {
			c += tr.TracerCostNs
		}
		if c > 0 {
			cost = render.FormatNs(c / float64(len(m.Trials)))
		}
		t.Append([]string{n, fmt.Sprint(sum.Count), render.FormatNs(sum.P50), render.FormatNs(sum.P90),
			render.FormatNs(sum.P99), render.FormatNs(sum.P999), render.FormatNs(sum.Max), cost})
	}
	return t
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
