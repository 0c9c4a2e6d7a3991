package stats

import (
	"math"
	"slices"
	"strconv"
)

// GatedOf returns pointers to the gated verdicts of vs.
func GatedOf(vs []Verdict) []*Verdict {
	var out []*Verdict
	for i := range vs {
		if vs[i].Gated {
			out = append(out, &vs[i])
		}
	}
	return out
}

// JudgeFamily sets the kind of every verdict of a family of gated tests.
// Regressions and improvements are two families of one-sided tests, each
// under Holm at alpha: a regression needs Holm to reject "ratio ≤ 1", the
// ratio beyond 1+T, and MinTailEvents events beyond the quantile on each
// side; an improvement mirrors it. "No change" needs the one-sided 1−beta
// bounds of the ratio inside (1−T, 1+T), and the same tail events. The
// rest is inconclusive.
func JudgeFamily(vs []*Verdict, alpha, beta float64) {
	up := make([]float64, len(vs))
	down := make([]float64, len(vs))
	for i, v := range vs {
		p := v.P
		if math.IsNaN(p) {
			p = 1
		}
		switch {
		case v.ranks != nil:
			up[i], down[i] = v.pUp, v.pDown
		case v.Ratio >= 1:
			up[i], down[i] = p, 1-p
		default:
			up[i], down[i] = 1-p, p
		}
	}
	upRej, upLevel := holm(up, alpha)
	downRej, downLevel := holm(down, alpha)
	for i, v := range vs {
		if v.Ratio >= 1 || math.IsNaN(v.Ratio) {
			v.Level = upLevel[i]
		} else {
			v.Level = downLevel[i]
		}
		decide(v, upRej[i], downRej[i], beta)
	}
}

// decide sets v's kind from its family's rejections.
func decide(v *Verdict, upRejected, downRejected bool, beta float64) {
	v.TrialsToSettle = 0
	pc, ok := LookupPercentile(v.Quantile)
	q := pc.Q
	if !ok {
		q = 1
	}
	t := v.Threshold
	short := tailShort(q, v.BaseEvents, v.CandEvents)
	if v.ranks != nil {
		decideRanks(v, q, upRejected, downRejected, beta, short)
		return
	}
	if v.BaseEvents == 0 || v.CandEvents == 0 || !(v.Ratio > 0) || math.IsInf(v.Ratio, 0) || math.IsNaN(v.SE) {
		v.Kind = Inconclusive
		return
	}
	logR := math.Log(v.Ratio)
	excess := 2 * v.ExcessSD * v.ExcessSD
	within := v.SE*v.SE - excess
	if v.Level > 0 {
		v.Detectable = math.Max(math.Expm1(tQuantile(v.Level, v.DF)*v.SE), t)
	}
	eqCrit := tQuantile(beta, v.DF)
	equivalent := v.Ratio*math.Exp(eqCrit*v.SE) < 1+t && v.Ratio*math.Exp(-eqCrit*v.SE) > 1-t
	called := v.Ratio > 1+t && upRejected || v.Ratio < 1-t && downRejected
	setKind(v, q, called, equivalent, short,
		func() int {
			return trialsToSettle(math.Abs(logR), within, excess, tQuantile(v.Level, v.DF), v.BaseTrials, v.CandTrials)
		},
		func() int {
			return trialsToSettle(roomInside(logR, t), within, excess, eqCrit, v.BaseTrials, v.CandTrials)
		})
}

// setKind sets v's kind from what its tests found: called, a regression
// or improvement confirmed past the threshold; equivalent, both bounds
// inside it. Too few events past the quantile (short) hold either back.
// What stays inconclusive gets the trials (or rounds) likely to settle
// it: beyond when the estimate is past the threshold, near when it is
// inside.
func setKind(v *Verdict, q float64, called, equivalent, short bool, beyond, near func() int) {
	t := v.Threshold
	if short {
		if why := starved(v, called); why != "" {
			// Few events past the quantile, but not for want of
			// evidence: the slowdown starved its own tail.
			decidedOnFewTail(v, why)
			if v.Ratio > 1 {
				v.Kind = Regression
			} else {
				v.Kind = Improvement
			}
			return
		}
	}
	switch {
	case (called || equivalent) && short:
		// The interval cannot be trusted on a handful of events past the
		// quantile: a gate says "regression" only when it knows.
		v.Kind = Inconclusive
		v.TrialsToSettle = trialsForTail(q, v)
	case called && v.Ratio > 1:
		v.Kind = Regression
	case called:
		v.Kind = Improvement
	case equivalent:
		v.Kind = NoChange
	case v.Ratio > 1+t || v.Ratio < 1-t:
		v.Kind = Inconclusive
		v.TrialsToSettle = beyond()
	default:
		v.Kind = Inconclusive
		v.TrialsToSettle = near()
	}
}

// Reasons a verdict with few events past its quantile is decided all
// the same (a WarnDecidedOnFewTail's Detail).
const (
	// StarvedInterval: the test called it and the whole interval lies
	// past the threshold.
	StarvedInterval = "interval"
	// StarvedCollapse: the slower side did at most 1/CollapseFactor of
	// the other's events per trial: it is slower by as much as it lacks
	// events, whatever its quantile's interval says.
	StarvedCollapse = "collapse"
)

// CollapseFactor is how many times fewer events per trial the slower side
// of a verdict must have done for its shortage of tail events to be the
// slowdown's own doing (StarvedCollapse).
const CollapseFactor = 2

// starved is why v, short of events past its quantile, is decided all
// the same (StarvedInterval, StarvedCollapse), "" when it is not. Both
// need the estimate past the threshold and the test to have called it
// (called: rejected at the level Holm gives it in the family), so that
// neither adds a false alarm the family's rate does not count. A slowdown of a workload that
// loops (a program that sleeps, a server under a closed loop) does fewer
// operations, so its side has fewer events past any quantile: the rule
// that wants MinTailEvents of them would pass the very slowdowns that
// starve their tails.
func starved(v *Verdict, called bool) string {
	t := v.Threshold
	up, down := v.Ratio > 1+t, v.Ratio < 1-t
	if !v.Gated || !(up || down) || v.BaseEvents == 0 || v.CandEvents == 0 {
		return ""
	}
	if !called {
		// Whichever rule decides, the family's test must have called it:
		// few events past the quantile hold a verdict back, they never
		// make one that the test at its level did not.
		return ""
	}
	if up && v.Lo > 1+t || down && v.Hi < 1-t {
		return StarvedInterval
	}
	b, c := eventsPerTrial(v.BaseEvents, v.BaseTrials), eventsPerTrial(v.CandEvents, v.CandTrials)
	if up && c*CollapseFactor <= b || down && b*CollapseFactor <= c {
		return StarvedCollapse
	}
	return ""
}

// decidedOnFewTail turns v's WarnFewTailEvents into the
// WarnDecidedOnFewTail that says why it was decided all the same.
func decidedOnFewTail(v *Verdict, why string) {
	per := func(events uint64, trials int) string {
		return strconv.FormatFloat(eventsPerTrial(events, trials), 'f', 0, 64)
	}
	for i, w := range v.Warnings {
		if w.Kind == WarnFewTailEvents && w.Percentile == v.Quantile {
			w.Kind, w.Detail = WarnDecidedOnFewTail, why
			w.Base, w.Cand = per(v.BaseEvents, v.BaseTrials), per(v.CandEvents, v.CandTrials)
			v.Warnings[i] = w
			return
		}
	}
}

func eventsPerTrial(events uint64, trials int) float64 {
	if trials <= 0 {
		return 0
	}
	return float64(events) / float64(trials)
}

// roomInside is the distance, on the log scale, from logR to the nearer
// end of ±t.
func roomInside(logR, t float64) float64 {
	room := math.Log1p(t) - logR
	if t < 1 {
		room = math.Min(room, logR-math.Log1p(-t))
	}
	return room
}

// decideRanks sets the kind of a paired verdict (paired.go): a
// regression when Holm rejected "no shift" on the exact signed-rank
// p-value and the ratio is past the threshold; "no change" when both
// one-sided 1−beta bounds of the shift lie inside ±threshold. A gated
// test with too few rounds for its level to be reachable at all says so,
// with the count that can.
func decideRanks(v *Verdict, q float64, upRejected, downRejected bool, beta float64, short bool) {
	t := v.Threshold
	p := v.ranks
	if p == nil || len(p.values) == 0 || !(v.Ratio > 0) || math.IsInf(v.Ratio, 0) {
		v.Kind = Inconclusive
		return
	}
	n := p.count
	if need := p.need(v.Level); v.Level > 0 && need > n {
		side := Both // rounds
		if p.boots {
			side = Candidate
		}
		v.Warnings = append(v.Warnings, Warning{Kind: WarnLevelUnreachable, Percentile: v.Quantile, Side: side, BaseCount: n, CandCount: need, Detail: strconv.FormatFloat(v.Level, 'g', 2, 64)})
	}
	c := math.Log(v.Ratio)
	lo := p.lower(v.Level)
	if v.Ratio < 1 {
		lo = -p.upper(v.Level)
		c = -c
	}
	if hw := c - lo; v.Level > 0 && !math.IsInf(hw, 0) {
		v.Detectable = math.Max(math.Expm1(hw), t)
	}
	eqLo, eqHi := p.lower(beta)-p.resolution, p.upper(beta)+p.resolution
	equivalent := math.Exp(eqHi) < 1+t && math.Exp(eqLo) > 1-t
	called := v.Ratio > 1+t && upRejected || v.Ratio < 1-t && downRejected
	logR := math.Log(v.Ratio)
	setKind(v, q, called, equivalent, short,
		func() int { return roundsToSettle(n, c, c-lo, p.need(v.Level)) },
		func() int {
			half := math.Max(eqHi-logR, logR-eqLo)
			return roundsToSettle(n, roomInside(logR, t), half, p.need(beta))
		})
}

// roundsToSettle estimates the rounds at which an interval half as wide
// as half (now, at n) would fit in distance: the
// half-width shrinks as 1/√n. At least need, the count the level needs at
// all. 0 when no count would do.
func roundsToSettle(n int, distance, half float64, need int) int {
	if distance <= 0 || math.IsNaN(distance) || math.IsNaN(half) {
		return 0
	}
	floor := max(need, n+1)
	if math.IsInf(half, 0) {
		return min(floor, MaxTrialsToSettle)
	}
	want := float64(n) * (half / distance) * (half / distance) * 1.1
	if want >= MaxTrialsToSettle {
		return MaxTrialsToSettle
	}
	return min(max(int(math.Ceil(want)), floor), MaxTrialsToSettle)
}

// holm runs Holm's step-down procedure at level alpha over p-values p: the
// j-th smallest is rejected when it and every smaller one is at most
// alpha/(m−j+1). level[i] is the level p[i] was judged at: that of its
// rank, or past the first acceptance the level there, so that rejected[i]
// exactly when p[i] ≤ level[i].
func holm(p []float64, alpha float64) (rejected []bool, level []float64) {
	m := len(p)
	rejected = make([]bool, m)
	level = make([]float64, m)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	stopped := false
	var at float64
	for j, i := range order {
		if !stopped {
			at = alpha / float64(m-j)
			if p[i] <= at {
				rejected[i] = true
			} else {
				stopped = true
			}
		}
		level[i] = at
	}
	return rejected, level
}

// decided reports whether a gated verdict is settled: a regression, an

// tailShort reports whether either side has fewer than MinTailEvents events
// beyond the quantile.
func tailShort(q float64, baseEvents, candEvents uint64) bool {
	return float64(baseEvents)*(1-q) < MinTailEvents || float64(candEvents)*(1-q) < MinTailEvents
}

// trialsForTail estimates the trials per side that would give both sides
// MinTailEvents events beyond the quantile, at the events per trial seen.
func trialsForTail(q float64, v *Verdict) int {
	need := 0
	for _, side := range []struct {
		events uint64
		trials int
	}{{v.BaseEvents, v.BaseTrials}, {v.CandEvents, v.CandTrials}} {
		if side.trials == 0 || side.events == 0 {
			continue
		}
		perTrial := float64(side.events) / float64(side.trials) * (1 - q)
		if perTrial <= 0 {
			return MaxTrialsToSettle
		}
		need = max(need, int(math.Ceil(MinTailEvents/perTrial)))
	}
	return min(max(need, 1), MaxTrialsToSettle)
}

// trialsToSettle estimates the trials per side at which crit standard
// errors fit in distance (on the log scale): the within-run variance
// shrinks as 1/n, the between-run excess does not. It assumes the ratio
// stays where it is, so it is a likely answer, not a promise; 0 when no
// trial count would do.
func trialsToSettle(distance, within, excess, crit float64, baseTrials, candTrials int) int {
	n := float64(max(min(baseTrials, candTrials), 1))
	if math.IsNaN(within) || math.IsNaN(crit) || within <= 0 || distance <= 0 {
		return 0
	}
	room := (distance/crit)*(distance/crit) - excess
	if room <= 0 {
		return MaxTrialsToSettle
	}
	// A 10% margin: stopping exactly at the boundary settles half the time.
	need := n * within / room * 1.1
	if need >= MaxTrialsToSettle {
		return MaxTrialsToSettle
	}
	k := int(math.Ceil(need))
	if k <= int(n) {
		k = int(n) + 1
	}
	return min(k, MaxTrialsToSettle)
}
