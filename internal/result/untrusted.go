package result

import "fmt"

// CheckUntrusted checks what Parse leaves to a Result's writer, for a
// Result that comes from a process the reader does not trust (a guest
// kernel's init): it must be of this schema, its scenarios and metrics
// named once each, its counts not negative. A Result file is checked by
// Parse alone, since tailgate wrote it; a guest's reply is checked by
// both. Errors wrap ErrCorrupt.
func CheckUntrusted(r *Result) error {
	if r.Schema != SchemaVersion {
		return fmt.Errorf("%w: schema %d, this tailgate writes %d", ErrCorrupt, r.Schema, SchemaVersion)
	}
	seen := map[string]bool{}
	for i, s := range r.Scenarios {
		switch {
		case s.Name == "":
			return fmt.Errorf("%w: scenario %d has no name", ErrCorrupt, i+1)
		case seen[s.Name]:
			return fmt.Errorf("%w: scenario %s appears twice", ErrCorrupt, s.Name)
		case s.Trials < 0:
			return fmt.Errorf("%w: scenario %s: %d trials", ErrCorrupt, s.Name, s.Trials)
		}
		seen[s.Name] = true
		for name, m := range s.Metrics {
			if name == "" {
				return fmt.Errorf("%w: scenario %s has a metric with no name", ErrCorrupt, s.Name)
			}
			for j, t := range m.Trials {
				switch {
				case t.Duration < 0:
					return fmt.Errorf("%w: scenario %s metric %s trial %d: duration %g s", ErrCorrupt, s.Name, name, j+1, t.Duration)
				case t.TracerCostNs < 0:
					return fmt.Errorf("%w: scenario %s metric %s trial %d: tracer cost %g ns", ErrCorrupt, s.Name, name, j+1, t.TracerCostNs)
				}
			}
		}
	}
	for _, sk := range r.Skipped {
		if sk.Scenario == "" {
			return fmt.Errorf("%w: a skipped scenario has no name", ErrCorrupt)
		}
	}
	return nil
}
