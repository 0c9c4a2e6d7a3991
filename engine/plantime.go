package engine

import (
	"fmt"
	"time"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// DefaultMaxTime is the most wall time a run's plan may take unless the
// command's --max-time says more: a CI job's own limit (GitHub Actions
// stops a job at 6 h). A plan over it is bad input, said before anything
// runs, rather than a job that runs for days.
const DefaultMaxTime = 6 * time.Hour

// TrialsTime is the least wall time the trials of ss take as spec resolves
// them: each scenario's warmup and trials. Starting a worker, loading its
// tracers or booting a VM comes on top.
func (s Spec) TrialsTime(ss []*scenarios.Scenario) time.Duration {
	var t time.Duration
	for _, sc := range ss {
		r := s.Resolve(sc)
		t += r.Warmup + time.Duration(r.Trials)*r.Duration
	}
	return t
}

// RoundsTime is the least wall time rounds of spec take on n targets,
// and what of (for CheckTime): every round runs one trial of each
// scenario, after its warmup, on each target (Rounds).
func (s Spec) RoundsTime(n int) (time.Duration, string) {
	var per time.Duration
	for _, sc := range s.Scenarios {
		r := s.Resolve(sc)
		per += r.Warmup + r.Duration
	}
	rounds := PlannedRounds(s)
	return time.Duration(rounds*n) * per, fmt.Sprintf("%s of a trial and its warmup of each of %s on %s",
		english.Count(rounds, "round"), english.Count(len(s.Scenarios), "scenario"), english.Count(n, "target"))
}

// CheckTime refuses a plan of planned wall time (what words how it is
// made up) over max, in one line saying how long it would take and how
// to raise the limit. An InputError.
func CheckTime(planned, max time.Duration, what string) error {
	if planned <= max {
		return nil
	}
	return Inputf("this plan takes at least %s (%s), over the most a run may take, %s: give --max-time %s (or more) to run it, or plan fewer or shorter trials",
		scenarios.ShortDuration(planned.Round(time.Second)), what, scenarios.ShortDuration(max), scenarios.ShortDuration(planned.Round(time.Minute)+time.Minute))
}

// ParseMaxTime reads --max-time: a positive duration.
func ParseMaxTime(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a duration such as 6h or 90m")
	}
	return d, nil
}
