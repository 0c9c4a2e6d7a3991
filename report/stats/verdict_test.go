package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	p99, _ := LookupPercentile("p99")
	// 20 trials per side, plenty of events: DF 19.
	est := func(r, se float64) Estimate {
		e := Estimate{BaseEvents: 1e6, CandEvents: 1e6, BaseTrials: 20, CandTrials: 20, BaseVar: se * se / 2, CandVar: se * se / 2}
		e.Base, e.Cand, e.Ratio = 100000, 100000*r, r
		return e.finish(0)
	}
	fewCand := func(e Estimate) Estimate { e.CandEvents = 600; return e }
	fewBoth := func(e Estimate) Estimate { e.BaseEvents, e.CandEvents = 600, 600; return e }
	for _, c := range []struct {
		name    string
		e       Estimate
		gated   bool
		want    Kind
		settles bool
	}{
		{"regression", est(1.3, 0.05), true, Regression, false},
		{"regression needs significance", est(1.2, 0.1), true, Inconclusive, true},
		{"significant but maybe past the threshold", est(1.08, 0.02), true, Inconclusive, true},
		{"tight interval inside the threshold is no change", est(1.03, 0.01), true, NoChange, false},
		{"at the threshold nothing settles", est(1.1, 0.005), true, Inconclusive, false},
		{"improvement", est(0.7, 0.05), true, Improvement, false},
		{"improvement needs significance", est(0.8, 0.15), true, Inconclusive, true},
		{"no change", est(1.0, 0.02), true, NoChange, false},
		{"no change needs a narrow interval", est(1.0, 0.1), true, Inconclusive, true},
		{"not gated", est(2, 0.05), false, NotGated, false},
		{"few events past p99 and an interval reaching the threshold make no regression", fewBoth(est(1.2, 0.05)), true, Inconclusive, true},
		{"few events past p99 cannot make no change", fewCand(est(1.0, 0.01)), true, Inconclusive, true},
		{"no events", Estimate{Base: math.NaN(), Cand: 5, Ratio: math.NaN(), BaseVar: math.NaN(), CandVar: math.NaN(), CandEvents: 10, BaseTrials: 5, CandTrials: 5}.finish(0), true, Inconclusive, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("m", p99, c.e, 0.10, c.gated, 20, 20)
			if v.Kind != c.want {
				t.Errorf("kind %q, want %q (P %.3g at level %.3g)", v.Kind, c.want, v.P, v.Level)
			}
			if (v.TrialsToSettle > 0) != c.settles {
				t.Errorf("TrialsToSettle %d, want it set: %v", v.TrialsToSettle, c.settles)
			}
			if (v.Kind == Regression || v.Kind == Improvement) && !(v.P <= v.Level) {
				t.Errorf("%s with P %.3g above its level %.3g", v.Kind, v.P, v.Level)
			}
		})
	}
}

func TestPValue(t *testing.T) {
	// log(1.2)/0.05 = 3.646 standard errors; P(T₉ > 3.646) = 0.00267.
	e := Estimate{Base: 100, Cand: 120, Ratio: 1.2, BaseVar: 0.00125, CandVar: 0.00125, BaseTrials: 10, CandTrials: 10, BaseEvents: 1e6, CandEvents: 1e6}.finish(0)
	if math.Abs(e.SE-0.05) > 1e-12 || e.DF != 9 {
		t.Fatalf("SE %g DF %g, want 0.05 and 9", e.SE, e.DF)
	}
	if p := e.P(); math.Abs(p-0.00267) > 0.00003 {
		t.Errorf("P = %.5f, want 0.00267", p)
	}
	// The interval is exp(log R ± t₉(0.975)·SE), t₉(0.975) = 2.2622.
	if lo := 1.2 * math.Exp(-2.2622*0.05); math.Abs(e.Lo-lo) > 1e-4 {
		t.Errorf("Lo = %.5f, want %.5f", e.Lo, lo)
	}
	// A side whose own variance is low does not narrow the interval: the
	// larger per-trial variance stands for both.
	lucky := e
	lucky.BaseVar = 1e-6
	if l := lucky.finish(0); math.Abs(l.SE-0.05) > 1e-12 {
		t.Errorf("SE with one quiet side %g, want 0.05", l.SE)
	}
	// Calibrated excess widens the interval and raises P.
	w := e.finish(2 * 0.03 * 0.03)
	if !(w.SE > e.SE && w.Lo < e.Lo && w.Hi > e.Hi && w.P() > e.P()) {
		t.Errorf("excess did not widen: SE %g→%g, [%g, %g]→[%g, %g], P %g→%g", e.SE, w.SE, e.Lo, e.Hi, w.Lo, w.Hi, e.P(), w.P())
	}
}

func TestHolm(t *testing.T) {
	// m = 4 at 0.01: levels 0.0025, 0.00333, 0.005, 0.01 by rank.
	rej, level := holm([]float64{0.004, 0.001, 0.2, 0.0032}, 0.01)
	if d := cmp.Diff([]bool{true, true, false, true}, rej); d != "" {
		t.Errorf("rejected (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{0.005, 0.0025, 0.01, 0.01 / 3}, level, cmpApprox); d != "" {
		t.Errorf("levels (-want +got):\n%s", d)
	}
	// A step-down stops at the first acceptance: 0.004 > 0.0033 at rank 2
	// keeps 0.0049 from being tried at 0.005.
	rej, level = holm([]float64{0.001, 0.004, 0.0049, 0.5}, 0.01)
	if d := cmp.Diff([]bool{true, false, false, false}, rej); d != "" {
		t.Errorf("rejected (-want +got):\n%s", d)
	}
	for i := range rej {
		if rej[i] != ([]float64{0.001, 0.004, 0.0049, 0.5}[i] <= level[i]) {
			t.Errorf("test %d: rejected %v but P vs level %g says otherwise", i, rej[i], level[i])
		}
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(a)) })

func TestTrialsToSettle(t *testing.T) {
	// Within-run variance 0.5 at 4 trials, room (0.5/1)² = 0.25: 8 trials,
	// with a 10% margin 9.
	if got := trialsToSettle(0.5, 0.5, 0, 1, 4, 4); got != 9 {
		t.Errorf("trialsToSettle = %d, want 9", got)
	}
	// Always more than we have.
	if got := trialsToSettle(1, 0.25, 0, 1, 5, 5); got != 6 {
		t.Errorf("trialsToSettle with a narrow interval = %d, want 6", got)
	}
	if got := trialsToSettle(0.001, 1, 0, 2, 5, 5); got != MaxTrialsToSettle {
		t.Errorf("trialsToSettle far = %d, want cap %d", got, MaxTrialsToSettle)
	}
	// Between-run excess does not shrink with trials: if it alone fills
	// the room, no count settles it.
	if got := trialsToSettle(0.1, 0.001, 0.02, 1, 5, 5); got != MaxTrialsToSettle {
		t.Errorf("trialsToSettle past the excess = %d, want cap %d", got, MaxTrialsToSettle)
	}
	if got := trialsToSettle(0, 0.1, 0, 1, 5, 5); got != 0 {
		t.Errorf("trialsToSettle at zero distance = %d, want 0", got)
	}
}

// TestJudgeStarvedTail: a slowdown that leaves its side few events past
// the quantile is decided all the same when the whole interval is past
// the threshold, or when the slower side's events per trial collapsed,
// and says which; either needs the test to have called it. Otherwise few
// events still hold the verdict back.
func TestJudgeStarvedTail(t *testing.T) {
	p99, _ := LookupPercentile("p99")
	est := func(r, se float64, baseEvents, candEvents uint64) Estimate {
		e := Estimate{BaseEvents: baseEvents, CandEvents: candEvents, BaseTrials: 20, CandTrials: 20, BaseVar: se * se / 2, CandVar: se * se / 2}
		e.Base, e.Cand, e.Ratio = 100000, 100000*r, r
		return e.finish(0)
	}
	for _, c := range []struct {
		name string
		e    Estimate
		want Kind
		why  string
	}{
		// sleep 0.001 against sleep 0.02: p99 ×14.8 [×12.1, ×15.9], 5 events past it.
		{"the interval clears the threshold", est(14.8, 0.07, 20000, 500), Regression, StarvedInterval},
		{"the interval clears it, events alike", est(1.5, 0.05, 600, 600), Regression, StarvedInterval},
		{"an improvement that clears it", est(0.5, 0.05, 600, 1000), Improvement, StarvedInterval},
		// Called (p ≈ 0.003) with the interval reaching inside ±10%.
		{"the slower side collapsed", est(1.25, 0.08, 20000, 600), Regression, StarvedCollapse},
		{"collapsed, but the test did not call it", est(1.3, 0.3, 20000, 600), Inconclusive, ""},
		{"collapsed, but inside the threshold", est(1.05, 0.3, 20000, 600), Inconclusive, ""},
		{"the faster side has fewer events", est(1.3, 0.3, 600, 20000), Inconclusive, ""},
		{"neither clears nor collapsed", est(1.3, 0.3, 600, 600), Inconclusive, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("m", p99, c.e, 0.10, true, 20, 20)
			if v.Kind != c.want {
				t.Errorf("kind %q [%.3g, %.3g], want %q", v.Kind, v.Lo, v.Hi, c.want)
			}
			var why []string
			few := 0
			for _, w := range v.Warnings {
				switch w.Kind {
				case WarnDecidedOnFewTail:
					why = append(why, w.Detail)
				case WarnFewTailEvents:
					few++
				}
			}
			if c.why == "" && (len(why) != 0 || few != 1) || c.why != "" && (!cmp.Equal(why, []string{c.why}) || few != 0) {
				t.Errorf("decided on few tail events for %q and %d few-tail warnings, want %q", why, few, c.why)
			}
		})
	}
}
