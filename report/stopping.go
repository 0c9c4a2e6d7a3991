package report

import "time"

// StopReason is why a gate run stops after a look.
type StopReason string

// Reasons to stop.
const (
	// StopSingleLook: the comparison was a single, final look.
	StopSingleLook StopReason = "single look"
	// StopDecided: every gated test is decided.
	StopDecided StopReason = "decided"
	// StopRegression: a regression is confirmed, so the gate fails
	// whatever the undecided tests would become.
	StopRegression StopReason = "regression"
	// StopBudget: the budget is spent with gated tests undecided, which
	// stay inconclusive.
	StopBudget StopReason = "budget spent"
)

// Stopping says whether and why a gate run stops after a look, for the
// renderers.
type Stopping struct {
	Stop   bool
	Reason StopReason // empty when not stopping
	Look   int
	// Trials is the fewest trials of a side behind the gated verdicts;
	// with one trial per round, the rounds run.
	Trials int
	// Gated, Undecided and Regressions count the gated tests, those not
	// decided and the regressions.
	Gated, Undecided, Regressions int
}

// RunInfo says how a sequential gate run went: how many rounds it ran, for
// how long, and why it stopped. The caller that ran the rounds sets it on
// the Report of its last look; renderers show it under the headline.
type RunInfo struct {
	Rounds  int
	Seconds float64
	// Slice, when > 0, is the longest slice of the rounds' trials, which
	// took turns within each round.
	Slice time.Duration
	Stop  Stopping
}
