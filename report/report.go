// Package report is the comparison model: one table of targets against a
// reference (Matrix), each target's comparison with it a Report, and a
// two-sided compare the N = 2 case (Report.Matrix). Compare and
// CompareMatrix build it from two or more Results with the statistics of
// report/stats; report/render lays it out and computes nothing. Besides
// the verdicts it holds what the renderers show around them: the
// Results' differences, the slowest events of a regression, the plots'
// data and a branch's trends.
package report

import (
	"errors"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// ScenarioReport is the comparison of one scenario.
type ScenarioReport struct {
	Name     string
	Verdicts []stats.Verdict // by metric name, then percentile order
	// Warnings apply to the scenario as a whole: a metric on one side only,
	// a gate block that could not be read, parameters forced past.
	Warnings []stats.Warning
}

// Report is the comparison of two Results.
type Report struct {
	Base, Cand Side
	Scenarios  []ScenarioReport
	// Warnings apply to every verdict: the environments differ, timings are
	// emulated, a scenario is on one side only.
	Warnings []stats.Warning
	// BaseResult and CandResult are the compared Results, for renderers
	// that draw the distributions (html); nil in a Report built by hand.
	BaseResult, CandResult *result.Result
	// Look is the look of a sequential gate run this report judged (0: a
	// single look). Alpha is the family-wise level spent at this look and
	// Beta the equivalence level ("no change"); Tests the gated tests of
	// the family they were spent over (for a matrix, all of its pairs').
	Look        int
	Alpha, Beta float64
	Tests       int
	// Stored says the baseline is a stored run; Calibration is the
	// between-run spread its intervals were widened by (nil for none).
	Stored      bool
	Calibration *stats.Calibration
	// Run is how a sequential gate run went; nil for a single comparison.
	Run *RunInfo
}

// Side describes one of the compared Results.
type Side struct {
	Target        string
	KernelRelease string
	Accel         string
	// Clock is a VM's clock (result.Target.Clock), "" for the host.
	Clock string
	// Virtual says it ran in virtual time (result.Target.Virtual).
	Virtual bool
}

// Options controls Compare. The zero value compares with the defaults: a
// single look at stats.DefaultAlpha, the baseline measured in the same
// job.
type Options struct {
	// Resamples per bootstrap; 0 means stats.DefaultResamples.
	Resamples int
	// Thresholds are command-line overrides.
	Thresholds []stats.Threshold
	// Force compares scenarios whose parameters differ (with a warning)
	// instead of refusing.
	Force bool
	// Alpha is the family-wise false-alarm rate of the invocation, over
	// all looks of a sequential run; 0 means stats.DefaultAlpha. Beta bounds the
	// chance that a regression of at least its threshold is called "no
	// change", over all looks; 0 means stats.DefaultBeta.
	Alpha, Beta float64
	// Look is the look this comparison is of a sequential gate run
	// (1-based; see stats.Sequential), or 0 for a single, final look at
	// the full Alpha and Beta. Looks is stats.Sequential.Looks: the most
	// looks planned, 0 for open-ended.
	Look, Looks int
	// EvenSpending spends the rates evenly over the Looks planned (see
	// stats.Sequential.Even).
	EvenSpending bool
	// Stored says the baseline is a stored run from another job, not
	// measured beside the candidate: between-run spread is not in its
	// trials. Calibration, when set, is that spread, and widens every
	// interval; without it the report warns that its intervals cover
	// within-run noise only.
	Stored      bool
	Calibration *stats.Calibration

	// gatedOnly skips the bootstrap of what is not gated (simulations:
	// it changes no verdict, only what is reported beside them).
	gatedOnly bool
	// boots compares the trials as boots in virtual time
	// (stats.CompareBoots): both Results' clock is virtual.
	boots bool
	// commonDraws pairs seeded boots by seed (CommonDraws).
	commonDraws bool
}

func (o Options) sequential() stats.Sequential {
	return stats.Sequential{Alpha: o.Alpha, Beta: o.Beta, Looks: o.Looks, Even: o.EvenSpending}
}

// ErrCandidateIncomplete reports a candidate that lacks what the gate
// policy gates: a metric, its events, its trials. A broken run, not a
// pass: the caller exits as for an infrastructure failure.
var ErrCandidateIncomplete = errors.New("candidate incomplete")

// ErrBaselineIncomplete reports a baseline that lacks what its own gate
// policy gates, or whose policy gates nothing: every comparison with it
// would pass "0 gated percentiles". Broken input, not a pass.
var ErrBaselineIncomplete = errors.New("baseline incomplete")

// ErrParamsDiffer reports scenarios run with different parameters: their
// numbers measure different things.
var ErrParamsDiffer = errors.New("scenario parameters differ")

// ErrClocksDiffer reports Results measured on different clocks (virtual
// and real time, or virtual time of two shifts): a ratio of their times
// measures nothing.
var ErrClocksDiffer = errors.New("clocks differ")
