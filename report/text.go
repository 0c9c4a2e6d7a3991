package report

import (
	"fmt"
	"io"
	"strings"
)

// writeText writes m as plain-text tables for a terminal or a CI log.
func writeText(w io.Writer, m *Matrix) error {
	ew := &errWriter{w: w}
	ps := m.pairings()
	for _, p := range ps {
		fmt.Fprintf(ew, "%s\n", p.headline())
	}
	for _, p := range ps {
		if p.r.Run != nil {
			fmt.Fprintf(ew, "%-10s %s%s\n", "run:", p.prefix(), p.r.Run)
		}
		if line := detectionLine(p.r.Detections()); line != "" {
			fmt.Fprintf(ew, "%-10s %s%s\n", "detects:", p.prefix(), line)
		}
	}
	for i := range m.Targets {
		fmt.Fprintf(ew, "%-10s %s\n", m.role(i)+":", m.describe(i))
	}
	for _, p := range ps {
		if line := differenceLine(p.r); line != "" {
			fmt.Fprintf(ew, "%-10s %s%s\n", "differs:", p.prefix(), line)
		}
	}
	for _, warn := range m.warnings() {
		fmt.Fprintf(ew, "warning: %s\n", warn)
	}
	for _, s := range m.Scenarios {
		fmt.Fprintf(ew, "\nscenario %s\n", s.Name)
		if ew.err != nil {
			return ew.err
		}
		if len(s.Metrics) > 0 {
			t := NewTable(ew, m.tableAlign()...)
			t.Header(m.tableHeader())
			for _, mm := range s.Metrics {
				for _, row := range mm.Rows {
					if err := t.Append(tableRow(mm.Name, row, verdictLabel)); err != nil {
						return err
					}
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		// Metrics without events on any target share one line rather
		// than a warning each.
		empty, warns := m.scenarioNotes(s.Name)
		if len(empty) > 0 {
			fmt.Fprintf(ew, "no events: %s\n", strings.Join(empty, ", "))
		}
		for _, warn := range warns {
			fmt.Fprintf(ew, "warning: %s\n", warn)
		}
	}
	for _, p := range ps {
		if p.target != "" && len(p.r.RegressionEvidence()) > 0 {
			fmt.Fprintf(ew, "\n%s vs %s:\n", p.target, p.ref)
		}
		if err := writeEvidenceText(ew, p.r); err != nil {
			return err
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
