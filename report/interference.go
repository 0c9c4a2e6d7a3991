package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// DisturbedShare is the share of a trial's CPU time in other tasks, hardirqs,
// softirqs and steal (result.CPUTime) above which the trial counts as
// disturbed: 2%, ten times what a quiet machine shows here.
const DisturbedShare = 0.02

// disturbedFraction is the fraction of a side's trials a scenario warns
// at: one in ten.
const disturbedFraction = 0.1

// trialShare is the share of t's CPU time outside its workload, or −1
// when the trial has no CPU time.
func trialShare(t *result.Trial) float64 {
	c := t.CPUTime
	if c == nil || c.WindowNs == 0 {
		return -1
	}
	return float64(c.OtherTasksNs+c.HardirqNs+c.SoftirqNs+c.StealNs) / float64(c.WindowNs)
}

// disturbed counts a scenario's trials whose CPUs were disturbed
// (trialShare above DisturbedShare), of those with a CPU time, and the
// largest share. Every metric of a trial shares its CPU time, so the
// first metric (by name) with one stands for the trial.
func disturbed(s *result.Scenario) (n, of int, most float64) {
	for _, name := range slices.Sorted(maps.Keys(s.Metrics)) {
		m := s.Metrics[name]
		if m == nil { // a null metric: refused elsewhere, never read here
			continue
		}
		for i := range m.Trials {
			sh := trialShare(&m.Trials[i])
			if sh < 0 {
				continue
			}
			of++
			most = max(most, sh)
			if sh > DisturbedShare {
				n++
			}
		}
		if of > 0 {
			return n, of, most
		}
	}
	return 0, 0, 0
}

// interferenceWarning warns when one trial in ten or more of either side
// ran on CPUs that other work took more than DisturbedShare of: the
// explanation of wide intervals on a shared runner.
func interferenceWarning(base, cand *result.Scenario) *stats.Warning {
	bn, bof, bmost := disturbed(base)
	cn, cof, cmost := disturbed(cand)
	hit := func(n, of int) bool { return of > 0 && float64(n) >= disturbedFraction*float64(of) }
	if !hit(bn, bof) && !hit(cn, cof) {
		return nil
	}
	return &stats.Warning{Kind: stats.WarnInterference, Scenario: cand.Name, BaseCount: bn, CandCount: cn,
		Base: strconv.Itoa(bof), Cand: strconv.Itoa(cof), Detail: fmt.Sprintf("%.0f%%", 100*max(bmost, cmost))}
}
