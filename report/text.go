package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText writes r as plain-text tables for a terminal or a CI log.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s\n", r.Headline())
	if r.Run != nil {
		fmt.Fprintf(ew, "run:       %s\n", r.Run)
	}
	fmt.Fprintf(ew, "baseline:  %s\ncandidate: %s\n", describeSide(r.Base), describeSide(r.Cand))
	for _, warn := range r.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", warn.String())
	}
	for _, s := range r.Scenarios {
		fmt.Fprintf(ew, "\nscenario %s\n", s.Name)
		if ew.err != nil {
			return ew.err
		}
		if len(s.Verdicts) > 0 {
			t := NewTable(ew, left, left, right, right, right, left, right, left)
			t.Header([]string{"metric", "pctl", "baseline", "candidate", "delta", "95% CI", "threshold", "verdict"})
			for _, v := range gatedFirst(s.Verdicts) {
				if err := t.Append([]string{
					v.Metric, v.Quantile, FormatNs(v.Base), FormatNs(v.Cand),
					FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v), verdictLabel(v),
				}); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		// Metrics without events on either side share one line rather
		// than a warning each.
		var empty []string
		rest := s
		rest.Warnings = nil
		for _, w := range s.Warnings {
			if w.Kind == WarnMetricNoEvents {
				empty = append(empty, w.Metric)
			} else {
				rest.Warnings = append(rest.Warnings, w)
			}
		}
		if len(empty) > 0 {
			fmt.Fprintf(ew, "no events: %s\n", strings.Join(empty, ", "))
		}
		for _, warn := range verdictWarnings(rest) {
			fmt.Fprintf(ew, "warning: %s\n", warn)
		}
	}
	return writeEvidenceText(ew, r)
}

// gatedFirst returns verdicts with the metrics that have a gated
// percentile first, each metric's rows kept together and in order.
func gatedFirst(vs []Verdict) []Verdict {
	gated := map[string]bool{}
	for _, v := range vs {
		if v.Gated {
			gated[v.Metric] = true
		}
	}
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b Verdict) int {
		switch {
		case gated[a.Metric] && !gated[b.Metric]:
			return -1
		case gated[b.Metric] && !gated[a.Metric]:
			return 1
		}
		return 0
	})
	return out
}

// errWriter keeps the first write error so that a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
