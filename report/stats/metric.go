package stats

import (
	"math"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// TrialOptions say how CompareTrials estimates a metric's percentiles.
type TrialOptions struct {
	// Percentiles are estimated in this order.
	Percentiles []Percentile
	// Threshold gives each percentile's threshold and whether it is gated.
	Threshold func(Percentile) (float64, bool)
	// Excess gives the between-run sd per side a calibration adds to a
	// percentile's interval; nil adds none.
	Excess func(Percentile) float64
	// Resamples per bootstrap; 0 means DefaultResamples.
	Resamples int
	// GatedOnly skips the bootstrap of what is not gated (simulations: it
	// changes no verdict, only what is reported beside them).
	GatedOnly bool
	// TrialCentre compares the sides by their trials' centres
	// (StatisticTrialCentre), as a stored baseline calibrated on that
	// statistic is compared; else by the quantile of their merged trials.
	TrialCentre bool
}

// CompareTrials estimates every percentile of one metric from the trials
// of two separate runs. The verdicts are not judged yet: JudgeFamily
// judges them with the rest of their family.
func CompareTrials(metric string, base, cand []*hist.Histogram, o TrialOptions) []Verdict {
	resamples := o.Resamples
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	bs, cs := newSide(base), newSide(cand)
	content := contentHash(base, cand)
	var out []Verdict
	for _, p := range o.Percentiles {
		t, gated := o.Threshold(p)
		n := resamples
		if o.GatedOnly && !gated {
			n = 0
		}
		var e Estimate
		if o.TrialCentre {
			e = centreEstimate(base, cand, p.Q, n, seedFor(content, metric, p.Name))
		} else {
			e = estimate(bs, cs, p.Q, n, seedFor(content, metric, p.Name))
		}
		var sd float64
		if o.Excess != nil {
			sd = o.Excess(p)
		}
		if sd > 0 {
			e = e.finish(2 * sd * sd)
		}
		v := newVerdict(metric, p, e, t, gated, len(base), len(cand))
		v.ExcessSD = sd
		out = append(out, v)
	}
	return out
}

// ComparePaired estimates every percentile of a metric whose trials pair
// by round (a same-job gate's, paired.go); false when they do not pair.
// The verdicts are not judged yet, as CompareTrials'.
func ComparePaired(metric string, base, cand *Sample, pcts []Percentile, threshold func(Percentile) (float64, bool)) ([]Verdict, bool) {
	pairs, ok := pairRounds(base, cand)
	if !ok {
		return nil, false
	}
	return comparePairs(metric, base, cand, pairs, pcts, threshold, 0), true
}

// comparePairs is a verdict per percentile of pcts over pairs of trials,
// by the signed-rank test of each pair's log ratio; resolution (log)
// widens the interval and the "no change" bounds, as a boot's bucket
// does (0 for none).
func comparePairs(metric string, base, cand *Sample, pairs []roundPair, pcts []Percentile, threshold func(Percentile) (float64, bool), resolution float64) []Verdict {
	var out []Verdict
	for _, p := range pcts {
		t, gated := threshold(p)
		e, pd := pairedEstimate(base, cand, logRatios(pairs, p.Q), p.Q)
		if pd != nil && resolution > 0 {
			pd.resolution = resolution
			e.Lo, e.Hi = e.Lo*math.Exp(-resolution), e.Hi*math.Exp(resolution)
		}
		v := newVerdict(metric, p, e, t, gated, len(base.Trials), len(cand.Trials))
		v.Rounds, v.ranks, v.pUp, v.pDown = e.Rounds, pd, e.PUp, e.PDown
		out = append(out, v)
	}
	return out
}

// CompareMetric returns a verdict per percentile for one metric's trials,
// its gated percentiles judged as a family of their own at a single look
// at DefaultAlpha. threshold gives each percentile's threshold and whether
// it is gated; resamples ≤ 0 means DefaultResamples.
func CompareMetric(metric string, base, cand []*hist.Histogram, threshold func(Percentile) (float64, bool), resamples int) []Verdict {
	vs := CompareTrials(metric, base, cand, TrialOptions{Percentiles: Percentiles, Threshold: threshold, Resamples: resamples})
	JudgeFamily(GatedOf(vs), DefaultAlpha, DefaultBeta)
	return vs
}

// Judge judges one estimate alone: a family of one test at a single look
// at DefaultAlpha.
func Judge(metric string, p Percentile, e Estimate, threshold float64, gated bool, baseTrials, candTrials int) Verdict {
	v := newVerdict(metric, p, e, threshold, gated, baseTrials, candTrials)
	if gated {
		JudgeFamily([]*Verdict{&v}, DefaultAlpha, DefaultBeta)
	}
	return v
}
