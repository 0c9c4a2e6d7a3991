package stats

// Kind is what a comparison concluded about one metric and percentile.
type Kind string

// Kinds of verdict.
const (
	NoChange     Kind = "no change"
	Regression   Kind = "regression"
	Improvement  Kind = "improvement"
	Inconclusive Kind = "inconclusive"
	// NotGated is reported for what the gate policy does not name: the
	// numbers are shown, nothing is judged.
	NotGated Kind = "not gated"
)
