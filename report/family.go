package report

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// DefaultAlpha is the family-wise false-alarm rate of one invocation:
// the chance, with nothing changed, that any gated test is called a
// regression (over all looks of a sequential run).
const DefaultAlpha = 0.01

// DefaultBeta bounds, per gated test, the chance that a regression of at
// least its threshold is called "no change" (over all looks).
const DefaultBeta = 0.05

// Sequential is the stopping rule of a gate run that looks at its data
// more than once: after rounds First, First+Every, First+2·Every, … (each
// round one more trial per side), it compares everything measured so far,
// and stops when every gated test is decided (Report.Decided), or when a
// regression is confirmed (the exit code is then 1, and stopping there is
// as valid as at any look), or when the budget is spent; what is
// undecided then is inconclusive. Report.Stopping applies the rule.
//
// Each look k spends part of the error rates: Holm's procedure over the
// invocation's gated tests at AlphaAt(k), and the "no change" intervals at
// one-sided level BetaAt(k) each side, where
//
//	AlphaAt(k) = Alpha · w(k),  BetaAt(k) = Beta · w(k),
//	w(k) = 6/(π²k²)            open-ended (Looks = 0),
//	w(k) = 2k/(K(K+1)), k ≤ K  with K = Looks planned,
//
// weights that sum to at most 1 over all looks. Look 0 is a single,
// final look at the full Alpha and Beta.
//
// Why the rule holds its rates: at look k, Holm keeps the chance of any
// false regression among the tests at most AlphaAt(k), whatever the other
// tests' truth (given valid p-values, which the simulations check). A run
// that stops at look J reports the verdicts of look J, so a false
// regression in its report is a false regression at some look k ≤ J, and
// by the union bound its chance is at most Σ_k AlphaAt(k) ≤ Alpha, for
// any stopping look J, however data-dependent. Likewise a test whose true
// ratio is at least 1+T is called "no change" at look k only if the
// upper end of its one-sided 1−BetaAt(k) interval falls below 1+T, a
// chance of at most BetaAt(k); over all looks at most Beta. The looks must
// fall at rounds fixed in advance (as First and Every fix them), not at
// rounds chosen from the data, and Looks, when set, must not depend on the
// data either. The union bound ignores how strongly successive looks
// agree, so the real rates are lower than Alpha and Beta; the price is
// power, most at the later looks of the open-ended weights.
type Sequential struct {
	// Alpha is the family-wise false-alarm rate over all looks; 0 means
	// DefaultAlpha. Beta bounds the chance of "no change" for a real
	// regression, per test, over all looks; 0 means DefaultBeta.
	Alpha, Beta float64
	// First is the round of the first look and Every the rounds between
	// looks after it; 0 means DefaultFirstLook and DefaultLookEvery.
	First, Every int
	// Growth, when above 1, spaces the looks geometrically instead: after
	// rounds ⌈First·Growth^j⌉ (GateSchedule: 12, 15, 19, 24, …), Every
	// unused. Open-ended, look k spends 6/(π²k²) of the rates, so a long
	// run that looked every other round would have almost nothing left to
	// spend by its later looks, where a noisy metric's decision falls.
	Growth float64
	// Looks, when positive, is the most looks the run will make, fixed
	// before it starts (from the budget and the time a round takes). The
	// rates are then spent in proportion to the look's number, as the
	// trials seen grow: Alpha·2k/(K(K+1)) at look k ≤ K = Looks, nothing
	// after. This keeps more for the last looks, where the power is. 0
	// means open-ended: Alpha·6/(π²k²).
	Looks int
	// Even, with Looks, spends the rates evenly: Alpha/Looks at each look
	// k ≤ Looks. A paired gate plans its looks from the budget and the
	// time its first rounds took, and an even spending keeps as much for
	// its first decisive looks as for its last.
	Even bool
}

// The default look schedule: the first look after 6 rounds, then one
// every 2.
const (
	DefaultFirstLook = 6
	DefaultLookEvery = 2
)

// GateSchedule is where a paired same-job gate may look: after rounds 12,
// 15, 19, 24, 30, 37, 46, 58, … (growing by a quarter). Not before 12:
// with 1% split over a dozen looks, fewer rounds cannot reach the level at
// all (a signed-rank test over n rounds has no p-value below 2^-n).
var GateSchedule = Sequential{First: 12, Growth: 1.25}

// PlanLooks returns the rounds after which a paired gate of at most n
// rounds looks: GateSchedule's rounds below n, then n itself. The plan
// may be made from the time the first rounds took (it depends on no
// round's sign, so the randomization test stays exact), and must be made
// before the first look.
func PlanLooks(n int) []int {
	if n < 1 {
		return nil
	}
	// A scheduled look just before the last would spend its share on
	// almost the same rounds.
	out := slices.DeleteFunc(GateSchedule.Rounds(n), func(r int) bool { return float64(r) > 0.9*float64(n) })
	return append(out, n)
}

// spend is the share of a rate spent at look k ≥ 1: 6/(π²k²) when
// open-ended, 2k/(K(K+1)) over K planned looks.
func (s Sequential) spend(k int) float64 {
	if K := s.Looks; K > 0 {
		if k > K {
			return 0
		}
		if s.Even {
			return 1 / float64(K)
		}
		return 2 * float64(k) / float64(K*(K+1))
	}
	return 6 / (math.Pi * math.Pi * float64(k) * float64(k))
}

// AlphaAt returns the family-wise level to spend at look k (1-based), or
// all of Alpha for k = 0, a single look.
func (s Sequential) AlphaAt(k int) float64 {
	a := s.Alpha
	if a <= 0 {
		a = DefaultAlpha
	}
	if k <= 0 {
		return a
	}
	return a * s.spend(k)
}

// BetaAt returns the one-sided level of the "no change" interval at look
// k (1-based), or all of Beta for k = 0.
func (s Sequential) BetaAt(k int) float64 {
	b := s.Beta
	if b <= 0 {
		b = DefaultBeta
	}
	if k <= 0 {
		return b
	}
	return b * s.spend(k)
}

// Rounds returns the rounds, at most n, after which the rule looks at the
// data: fixed before the run starts, as the rule requires.
func (s Sequential) Rounds(n int) []int {
	var out []int
	for r := 1; r <= n; r++ {
		if s.LookAt(r) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// LookAt returns the look due after the given round (1-based), or 0 when
// none is.
func (s Sequential) LookAt(round int) int {
	first, every := s.First, s.Every
	if first <= 0 {
		first = DefaultFirstLook
	}
	if s.Growth > 1 {
		k, last := 0, 0
		for r := float64(first); ; r *= s.Growth {
			at := int(math.Ceil(r - 1e-9))
			if at > round {
				return 0
			}
			if at != last { // two powers rounding to one round make one look
				k, last = k+1, at
			}
			if at == round {
				return k
			}
		}
	}
	if every <= 0 {
		every = DefaultLookEvery
	}
	if round < first || (round-first)%every != 0 {
		return 0
	}
	return (round-first)/every + 1
}

// judgeReports judges the gated tests of all reports as one family, at
// the levels of opt.Look.
func judgeReports(reps []*Report, opt Options) {
	seq := opt.sequential()
	alpha, beta := seq.AlphaAt(opt.Look), seq.BetaAt(opt.Look)
	var family []*Verdict
	for _, r := range reps {
		r.Look, r.Alpha, r.Beta = opt.Look, alpha, beta
		for si := range r.Scenarios {
			family = append(family, gatedOf(r.Scenarios[si].Verdicts)...)
		}
	}
	for _, r := range reps {
		r.Tests = len(family)
	}
	judgeFamily(family, alpha, beta)
}

// gatedOf returns pointers to the gated verdicts of vs.
func gatedOf(vs []Verdict) []*Verdict {
	var out []*Verdict
	for i := range vs {
		if vs[i].Gated {
			out = append(out, &vs[i])
		}
	}
	return out
}

// judgeFamily sets the kind of every verdict of a family of gated tests.
// Regressions and improvements are two families of one-sided tests, each
// under Holm at alpha: a regression needs Holm to reject "ratio ≤ 1", the
// ratio beyond 1+T, and MinTailEvents events beyond the quantile on each
// side; an improvement mirrors it. "No change" needs the one-sided 1−beta
// bounds of the ratio inside (1−T, 1+T), and the same tail events. The
// rest is inconclusive.
func judgeFamily(vs []*Verdict, alpha, beta float64) {
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
	n := v.Rounds
	if need := minRoundsFor(v.Level); v.Level > 0 && need > n {
		v.Warnings = append(v.Warnings, Warning{Kind: WarnLevelUnreachable, Percentile: v.Quantile, Side: Both, BaseCount: n, CandCount: need, Detail: strconv.FormatFloat(v.Level, 'g', 2, 64)})
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
	eqLo, eqHi := p.lower(beta), p.upper(beta)
	equivalent := math.Exp(eqHi) < 1+t && math.Exp(eqLo) > 1-t
	called := v.Ratio > 1+t && upRejected || v.Ratio < 1-t && downRejected
	logR := math.Log(v.Ratio)
	setKind(v, q, called, equivalent, short,
		func() int { return roundsToSettle(n, c, c-lo, minRoundsFor(v.Level)) },
		func() int {
			half := math.Max(eqHi-logR, logR-eqLo)
			return roundsToSettle(n, roomInside(logR, t), half, minRoundsFor(beta))
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
		return min(floor, maxTrialsToSettle)
	}
	want := float64(n) * (half / distance) * (half / distance) * 1.1
	if want >= maxTrialsToSettle {
		return maxTrialsToSettle
	}
	return min(max(int(math.Ceil(want)), floor), maxTrialsToSettle)
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
// improvement or no change.
func decided(v Verdict) bool {
	return v.Kind == Regression || v.Kind == Improvement || v.Kind == NoChange
}

// Decided reports whether every gated test of r is decided: a regression,
// an improvement or no change. A sequential gate run stops when it is.
func (r *Report) Decided() bool {
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if v.Gated && !decided(v) {
				return false
			}
		}
	}
	return true
}

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

// Stopping says whether a gate run stops after r's look (see Sequential):
// when every gated test is decided, when a regression is confirmed, when
// it was a single look, or when budgetSpent. A caller that wants every
// test decided even after a regression goes on while !r.Decided().
func (r *Report) Stopping(budgetSpent bool) Stopping {
	return stopping([]*Report{r}, budgetSpent)
}

func stopping(reps []*Report, budgetSpent bool) Stopping {
	st := Stopping{Trials: -1}
	for _, r := range reps {
		st.Look = r.Look
		for _, s := range r.Scenarios {
			for _, v := range s.Verdicts {
				if !v.Gated {
					continue
				}
				st.Gated++
				if !decided(v) {
					st.Undecided++
				}
				if v.Kind == Regression {
					st.Regressions++
				}
				if n := min(v.BaseTrials, v.CandTrials); st.Trials < 0 || n < st.Trials {
					st.Trials = n
				}
			}
		}
	}
	st.Trials = max(st.Trials, 0)
	switch {
	case st.Undecided == 0:
		st.Stop, st.Reason = true, StopDecided
	case st.Regressions > 0:
		st.Stop, st.Reason = true, StopRegression
	case st.Look == 0:
		st.Stop, st.Reason = true, StopSingleLook
	case budgetSpent:
		st.Stop, st.Reason = true, StopBudget
	}
	return st
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

// Detection is what a gated test could have caught: the smallest shift,
// as a fraction, it would have called at the level it was judged at
// (Verdict.Detectable), beside its threshold.
type Detection struct {
	Scenario, Metric, Percentile string
	Detectable, Threshold        float64
	// Rounds (paired) or Trials (the fewer of the two sides) behind it.
	Rounds, Trials int
}

// Blunt reports whether the test could not have caught a shift of its
// own threshold: what it would call is larger.
func (d Detection) Blunt() bool { return d.Detectable > d.Threshold*1.0001 }

// Detections lists every gated test's Detection, in report order; tests
// without one (no level, no interval) are left out.
func (r *Report) Detections() []Detection {
	var out []Detection
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated || math.IsNaN(v.Detectable) || v.Detectable <= 0 {
				continue
			}
			out = append(out, Detection{Scenario: s.Name, Metric: v.Metric, Percentile: v.Quantile, Detectable: v.Detectable, Threshold: v.Threshold, Rounds: v.Rounds, Trials: min(v.BaseTrials, v.CandTrials)})
		}
	}
	return out
}
