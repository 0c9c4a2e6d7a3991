package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// RenderRun writes one table per scenario of a Result: each metric's event
// count and percentiles over all trials merged, the workload's throughput
// and the tracer's cost per program run. Gated metrics come first; metrics
// without events are named on one line below the table.
func RenderRun(w io.Writer, r *result.Result) error {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		fmt.Fprintf(w, "%s (%d %s, %s on %s)\n", s.Name, s.Trials, plural(s.Trials, "trial", "trials"), r.Target.Name, r.Environment.KernelRelease)
		gate, _ := GatePolicy(s)
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
		sortGatedFirst(names, func(n string) bool { return metricGated(n, gate) })
		if len(names) > 0 {
			t := NewTable(w, left, right, right, right, right, right, right, right, right)
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
					cost = FormatNs(c / float64(len(m.Trials)))
				}
				// No op counted (an exec command without ops that every
				// trial's end cut) reads "-", never a rate of 0.
				rate := "-"
				if secs > 0 && ops > 0 {
					rate = formatRate(ops / secs)
				}
				if err := t.Append([]string{n, fmt.Sprint(sum.Count), rate, FormatNs(sum.P50), FormatNs(sum.P90),
					FormatNs(sum.P99), FormatNs(sum.P999), FormatNs(sum.Max), cost}); err != nil {
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
		for _, warn := range steppedWarnings(s, s) {
			fmt.Fprintf(w, "note: %s\n", warn)
		}
		fmt.Fprintln(w)
	}
	if r.Target.ClockOf() == result.ClockVirtual {
		fmt.Fprintf(w, "note: %s\n", VirtualTimeLine(fmt.Sprint(r.Target.Shift())))
	}
	if r.Partial {
		fmt.Fprintf(w, "partial result: %s\n", r.Error)
	}
	return nil
}

// metricGated says the gate policy gates metric at some percentile.
func metricGated(metric string, gate result.GatePolicy) bool {
	for _, p := range Percentiles {
		if _, ok := ResolveThreshold(metric, p.Name, gate, nil); ok {
			return true
		}
	}
	return false
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

// formatRate writes a rate per second with three significant digits:
// "850", "12.3k", "4.56M".
func formatRate(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "-"
	}
	switch a := math.Abs(r); {
	case a < 999.5:
		return fmt.Sprintf("%.0f", r)
	case a < 999.5e3:
		return sig3(r/1e3) + "k"
	case a < 999.5e6:
		return sig3(r/1e6) + "M"
	default:
		return sig3(r/1e9) + "G"
	}
}
