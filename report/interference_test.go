package report_test

import (
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// A scenario warns of interference when one trial in ten or more of a side
// ran on CPUs other work took more than 2% of, naming how many on each
// side and the largest share; below that, or without CPU times, nothing.
func TestInterferenceWarning(t *testing.T) {
	base := statstest.Synthetic{Median: 50000, Sigma: 0.2, Scale: 1}
	withShares := func(r *result.Result, shares ...float64) *result.Result {
		for _, m := range r.Scenarios[0].Metrics {
			for i := range m.Trials {
				if i < len(shares) {
					m.Trials[i].CPUTime = &result.CPUTime{WindowNs: 1e9, OtherTasksNs: uint64(shares[i] * 0.9e9), SoftirqNs: uint64(shares[i] * 0.1e9)}
				}
			}
		}
		return r
	}
	warned := func(b, c *result.Result) string {
		rep, err := report.Compare(b, c, report.Options{Resamples: 200})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rep.Scenarios[0].Warnings {
			if w.Kind == stats.WarnInterference {
				return render.WarningText(w)
			}
		}
		return ""
	}
	quiet := []float64{0, 0.01, 0, 0.005, 0, 0.01, 0, 0, 0, 0}
	if w := warned(withShares(statstest.Result("b", "k", base, 10, 1), quiet...), withShares(statstest.Result("c", "k", base, 10, 2), quiet...)); w != "" {
		t.Errorf("quiet trials (at most 1%%): warned %q", w)
	}
	if w := warned(statstest.Result("b", "k", base, 10, 1), statstest.Result("c", "k", base, 10, 2)); w != "" {
		t.Errorf("trials without CPU times: warned %q", w)
	}
	busy := []float64{0, 0.25, 0, 0, 0.03, 0, 0, 0, 0, 0}
	w := warned(withShares(statstest.Result("b", "k", base, 10, 1), quiet...), withShares(statstest.Result("c", "k", base, 10, 2), busy...))
	if !strings.Contains(w, "in 0 of 10 trials of the baseline and 2 of 10 of the candidate (at most 25%)") {
		t.Errorf("two of ten candidate trials at 25%% and 3%%: warned %q", w)
	}
}
