package report

import (
	"errors"
	"fmt"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Calibrate measures the between-run spread from K ≥ 2 separate runs of
// the same target and kernel (each of independent trials): per scenario,
// metric and percentile present in every run, stats.SpreadAcross the
// runs' trials. Created is the latest run's end.
func Calibrate(runs []*result.Result) (*stats.Calibration, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("%w, got %d", stats.ErrTooFewRuns, len(runs))
	}
	first := runs[0]
	created := first.Finished
	for i, r := range runs {
		if r.Target.Name != first.Target.Name {
			return nil, fmt.Errorf("calibrate: run %d is of target %s, run 1 of %s: calibrate one target at a time", i+1, r.Target.Name, first.Target.Name)
		}
		if r.Environment.KernelRelease != first.Environment.KernelRelease {
			return nil, fmt.Errorf("calibrate: run %d ran kernel %s, run 1 kernel %s: calibrate one kernel at a time", i+1, r.Environment.KernelRelease, first.Environment.KernelRelease)
		}
		if r.Finished.After(created) {
			created = r.Finished
		}
	}
	c := stats.NewCalibration(first.Target.Name, first.Environment.KernelRelease, created, len(runs))
	for _, s := range first.Scenarios {
		gate, _ := GatePolicy(&s)
		for name := range s.Metrics {
			trials, ok := runTrials(runs, s.Name, name)
			if !ok {
				continue
			}
			for _, p := range stats.PercentilesFor(gate, nil) {
				if sp, ok := stats.SpreadAcross(trials, name, p); ok {
					c.Add(s.Name, name, p.Name, sp)
				}
			}
		}
	}
	if len(c.Scenarios) == 0 {
		return nil, errors.New("calibrate: no scenario and metric with events in every run")
	}
	return c, nil
}

// runTrials is each run's trial histograms of a scenario's metric; false
// when some run lacks it.
func runTrials(runs []*result.Result, scenario, metric string) ([][]*hist.Histogram, bool) {
	out := make([][]*hist.Histogram, 0, len(runs))
	for _, r := range runs {
		s := r.Find(scenario)
		if s == nil || s.Metrics[metric] == nil {
			return nil, false
		}
		out = append(out, TrialHistograms(s.Metrics[metric]))
	}
	return out, true
}
