package report

import (
	"fmt"
	"io"
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
		t := NewTable(ew, left, left, right, right, right, left, right, left)
		t.Header([]string{"metric", "pctl", "baseline", "candidate", "delta", "95% CI", "threshold", "verdict"})
		for _, v := range s.Verdicts {
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
		for _, warn := range verdictWarnings(s) {
			fmt.Fprintf(ew, "warning: %s\n", warn)
		}
	}
	return ew.err
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
