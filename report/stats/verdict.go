package stats

import "math"

// MinTailEvents is the number of events beyond a quantile below which its
// estimate rests on too few events to trust.
const MinTailEvents = 20

// MaxTrialsToSettle caps the estimate of trials needed: past it, more
// trials are not a practical answer.
const MaxTrialsToSettle = 1000

// Verdict is the comparison of one metric at one percentile.
type Verdict struct {
	Metric   string
	Quantile string  // "p50", "p90", "p99", "p99.9", "max"
	Base     float64 // baseline quantile of the merged trials, ns
	Cand     float64 // candidate quantile, ns
	Ratio    float64 // Cand / Base
	Lo, Hi   float64 // 95% confidence interval of Ratio
	// SE is the standard error of log Ratio and DF its degrees of freedom
	// (see Estimate). ExcessSD is the between-run spread, per side, that
	// a calibration added to SE (0 when none was).
	SE, DF, ExcessSD float64
	// P is the one-sided p-value in the direction of the estimate (of
	// "ratio ≤ 1" when Ratio > 1, of "ratio ≥ 1" when below). Level is the
	// level it was judged at: its Holm level in the invocation's family at
	// this look's alpha, so that the test rejects exactly when P ≤ Level.
	// Level is 0 for a verdict that is not gated.
	P, Level  float64
	Threshold float64 // as a fraction; 0 when not gated
	Gated     bool
	Kind      Kind
	// Warnings say why the verdict may be less solid than it looks; they
	// never change it.
	Warnings []Warning
	// TrialsToSettle, for an inconclusive verdict, estimates the trials per
	// side that would likely decide it at this look's levels (0 when no
	// count would, or when it is decided).
	TrialsToSettle int
	// BaseTrials and CandTrials are the trial counts behind the verdict,
	// BaseEvents and CandEvents the events.
	BaseTrials, CandTrials int
	BaseEvents, CandEvents uint64
	// Rounds is the number of paired rounds behind a verdict of a same-job
	// gate (see paired.go); 0 for trials compared as two samples.
	Rounds int
	// Detectable is the smallest shift, as a fraction, that this
	// comparison could have called at the level it was judged at: the
	// distance from its estimate to its lower bound there, and never below
	// the threshold (a regression must pass it too). NaN when unknown.
	Detectable float64
	// Band is the nuisance band of seeded boots in virtual time (how far
	// the percentile moves across seeds alone, band.go); nil otherwise.
	Band *Band

	// ranks holds a rank-based verdict's order statistics (paired rounds'
	// Walsh averages); pUp and pDown its exact one-sided p-values.
	ranks      *rankData
	pUp, pDown float64
}

// Decided reports whether v is settled: a regression, an improvement or
// no change.
func (v Verdict) Decided() bool {
	return v.Kind == Regression || v.Kind == Improvement || v.Kind == NoChange
}

// newVerdict is a verdict's numbers before its family judges it.
func newVerdict(metric string, p Percentile, e Estimate, threshold float64, gated bool, baseTrials, candTrials int) Verdict {
	v := Verdict{
		Metric: metric, Quantile: p.Name,
		Base: e.Base, Cand: e.Cand, Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi,
		SE: e.SE, DF: e.DF, P: e.P(),
		Threshold: threshold, Gated: gated, Kind: NotGated,
		BaseTrials: baseTrials, CandTrials: candTrials,
		BaseEvents: e.BaseEvents, CandEvents: e.CandEvents,
		Detectable: math.NaN(),
	}
	if !gated {
		v.Threshold = 0
	}
	v.Warnings = warnings(p, e, gated, baseTrials, candTrials)
	return v
}

// warnings are what an estimate's own numbers put in doubt: a side
// without events, too few events past the percentile, a single trial.
func warnings(p Percentile, e Estimate, gated bool, baseTrials, candTrials int) []Warning {
	var w []Warning
	if e.BaseEvents == 0 {
		w = append(w, Warning{Kind: WarnNoEvents, Side: Baseline, Percentile: p.Name})
	}
	if e.CandEvents == 0 {
		w = append(w, Warning{Kind: WarnNoEvents, Side: Candidate, Percentile: p.Name})
	}
	if p.Q < 1 || gated {
		beyond := func(n uint64) (int, bool) {
			b := float64(n) * (1 - p.Q)
			return int(math.Floor(b)), n > 0 && b < MinTailEvents
		}
		bc, bShort := beyond(e.BaseEvents)
		cc, cShort := beyond(e.CandEvents)
		if bShort || cShort {
			side := Both
			if !cShort {
				side = Baseline
			} else if !bShort {
				side = Candidate
			}
			w = append(w, Warning{Kind: WarnFewTailEvents, Side: side, Percentile: p.Name, BaseCount: bc, CandCount: cc})
		}
	}
	switch {
	case baseTrials == 1 && candTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Both, Percentile: p.Name})
	case baseTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Baseline, Percentile: p.Name})
	case candTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Candidate, Percentile: p.Name})
	}
	return w
}
