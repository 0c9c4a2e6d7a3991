package report

import (
	"math"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

func TestSequentialSpending(t *testing.T) {
	s := Sequential{Alpha: 0.01, Beta: 0.05}
	if s.AlphaAt(0) != 0.01 || s.BetaAt(0) != 0.05 {
		t.Errorf("look 0 spends %g and %g, want all of 0.01 and 0.05", s.AlphaAt(0), s.BetaAt(0))
	}
	var a, b float64
	for k := 1; k <= 1_000_000; k++ {
		a += s.AlphaAt(k)
		b += s.BetaAt(k)
		if k > 1 && s.AlphaAt(k) >= s.AlphaAt(k-1) {
			t.Fatalf("look %d spends %g, not less than look %d", k, s.AlphaAt(k), k-1)
		}
	}
	if a > 0.01 || a < 0.01*(1-1e-5) || b > 0.05 || b < 0.05*(1-1e-5) {
		t.Errorf("a million looks spend %.8g and %.8g, want just under 0.01 and 0.05", a, b)
	}
	if got := (Sequential{}).AlphaAt(1); math.Abs(got-DefaultAlpha*6/(math.Pi*math.Pi)) > 1e-15 {
		t.Errorf("default alpha at look 1 = %g", got)
	}
	planned := Sequential{Alpha: 0.01, Looks: 8}
	a = 0
	for k := 1; k <= 8; k++ {
		a += planned.AlphaAt(k)
		if k > 1 && planned.AlphaAt(k) <= planned.AlphaAt(k-1) {
			t.Errorf("planned: look %d spends %g, not more than look %d", k, planned.AlphaAt(k), k-1)
		}
	}
	if math.Abs(a-0.01) > 1e-15 || planned.AlphaAt(9) != 0 || planned.BetaAt(9) != 0 {
		t.Errorf("8 planned looks spend %g, a 9th %g", a, planned.AlphaAt(9))
	}
	var looks []int
	for round := 1; round <= 20; round++ {
		if k := s.LookAt(round); k > 0 {
			looks = append(looks, round, k)
		}
	}
	want := []int{6, 1, 8, 2, 10, 3, 12, 4, 14, 5, 16, 6, 18, 7, 20, 8}
	if len(looks) != len(want) {
		t.Fatalf("looks (round, look) %v, want %v", looks, want)
	}
	for i := range want {
		if looks[i] != want[i] {
			t.Fatalf("looks (round, look) %v, want %v", looks, want)
		}
	}
}

// A report judged at a later look spends less alpha: the same data that
// make a regression at a single look may not at look 5.
func TestCompareLook(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	cand := synthResult(t, 2, "abc", "", 0.3, 5)
	single, err := Compare(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	later, err := Compare(base, cand, Options{Look: 5})
	if err != nil {
		t.Fatal(err)
	}
	if single.Alpha != DefaultAlpha || later.Alpha != (Sequential{}).AlphaAt(5) || later.Look != 5 {
		t.Errorf("alpha %g at a single look, %g at look %d", single.Alpha, later.Alpha, later.Look)
	}
	for si, s := range single.Scenarios {
		for vi, v := range s.Verdicts {
			w := later.Scenarios[si].Verdicts[vi]
			if v.P != w.P || v.Ratio != w.Ratio {
				t.Errorf("%s: the look changed the estimate", v.Quantile)
			}
			if v.Gated && !(w.Level < v.Level) {
				t.Errorf("%s: level %g at look 5, not below %g", v.Quantile, w.Level, v.Level)
			}
		}
	}
}

func TestStopping(t *testing.T) {
	v := func(k Kind) Verdict { return Verdict{Kind: k, Gated: k != NotGated, BaseTrials: 8, CandTrials: 9} }
	rep := func(look int, kinds ...Kind) *Report {
		var s ScenarioReport
		for _, k := range kinds {
			s.Verdicts = append(s.Verdicts, v(k))
		}
		return &Report{Look: look, Scenarios: []ScenarioReport{s}}
	}
	for _, c := range []struct {
		name    string
		r       *Report
		budget  bool
		stop    bool
		reason  StopReason
		decided bool
	}{
		{"all decided", rep(2, NoChange, Improvement, NotGated, NotGated), false, true, StopDecided, true},
		{"a regression settles the exit code", rep(2, Regression, Inconclusive), false, true, StopRegression, false},
		{"undecided goes on", rep(2, NoChange, Inconclusive), false, false, "", false},
		{"budget spent", rep(8, NoChange, Inconclusive), true, true, StopBudget, false},
		{"a single look stops", rep(0, Inconclusive), false, true, StopSingleLook, false},
		{"nothing gated is decided", rep(1, NotGated), false, true, StopDecided, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := c.r.Stopping(c.budget)
			if st.Stop != c.stop || st.Reason != c.reason {
				t.Errorf("Stopping = %+v, want stop %v for %q", st, c.stop, c.reason)
			}
			if c.r.Decided() != c.decided {
				t.Errorf("Decided() = %v, want %v", c.r.Decided(), c.decided)
			}
			if st.Look != c.r.Look || (st.Gated > 0 && st.Trials != 8) {
				t.Errorf("Stopping = %+v: want look %d, 8 trials", st, c.r.Look)
			}
		})
	}
}

// Holm spans every scenario of a report: two scenarios of one gated test
// each are judged at α/2 for the smaller p-value.
func TestCompareFamilySpansScenarios(t *testing.T) {
	two := func(seed uint64, shift float64) *result.Result {
		r := synthResult(t, seed, "abc", "", shift, 8)
		s := r.Scenarios[0]
		s.Name = "other"
		s.Definition = nil
		r.Scenarios = append(r.Scenarios, s)
		r.Scenarios[0].Definition = nil
		return r
	}
	rep, err := Compare(two(1, 0), two(2, 0.5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 2 {
		t.Fatalf("a family of %d tests, want 2 (p99 of one metric in each of two scenarios)", rep.Tests)
	}
	var levels []float64
	for _, s := range rep.Scenarios {
		for _, v := range s.Verdicts {
			if v.Gated {
				levels = append(levels, v.Level)
				if v.Kind != Regression {
					t.Errorf("%s %s: %s, want regression", s.Name, v.Quantile, v.Kind)
				}
			}
		}
	}
	if math.Min(levels[0], levels[1]) != DefaultAlpha/2 || math.Max(levels[0], levels[1]) != DefaultAlpha {
		t.Errorf("Holm levels %v, want %g and %g", levels, DefaultAlpha/2, DefaultAlpha)
	}
}

func TestStoredWarnings(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	cand := synthResult(t, 2, "abc", "", 0, 5)
	rep, err := Compare(base, cand, Options{Stored: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(rep.Warnings, WarnWithinRunOnly) {
		t.Errorf("stored, uncalibrated: warnings %v lack %q", rep.Warnings, WarnWithinRunOnly)
	}
	if got := strings.Join(warningStrings(rep.Warnings), "\n"); !strings.Contains(got, "`tailgate calibrate SCENARIO --baseline DIR` on host (kernel 6.1.0)") {
		t.Errorf("worded:\n%s", got)
	}
	cal := &Calibration{Schema: 1, Target: "other", KernelRelease: "6.1.0", Runs: 5, Scenarios: map[string]map[string]map[string]Spread{
		"getppid": {"syscall.getppid": {"p50": {UpperSD: 0.05}, "p90": {UpperSD: 0.05}}},
	}}
	// The gate block gates p50 and p90; the command line adds p99, which the
	// calibration lacks.
	opt := Options{Stored: true, Calibration: cal, Thresholds: []Threshold{{Percentile: "p99", Value: 0.1}}}
	rep, err = Compare(base, cand, opt)
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(rep.Warnings, WarnWithinRunOnly) || !hasWarning(rep.Warnings, WarnCalibrationMismatch) {
		t.Errorf("calibrated for another target: warnings %v", rep.Warnings)
	}
	if sw := rep.Scenarios[0].Warnings; len(sw) != 1 || sw[0].Kind != WarnNotCalibrated || sw[0].Percentile != "p99" {
		t.Errorf("scenario warnings %+v, want one: p99 not calibrated", sw)
	}
	plain, _ := Compare(base, cand, Options{Thresholds: opt.Thresholds})
	for i, v := range rep.Scenarios[0].Verdicts {
		p := plain.Scenarios[0].Verdicts[i]
		switch v.Quantile {
		case "p50", "p90":
			if v.ExcessSD != 0.05 || !(v.SE > p.SE) || !(v.Hi-v.Lo > p.Hi-p.Lo) {
				t.Errorf("%s: calibrated SE %g (excess %g) interval [%g, %g], uncalibrated %g [%g, %g]", v.Quantile, v.SE, v.ExcessSD, v.Lo, v.Hi, p.SE, p.Lo, p.Hi)
			}
			// 2σ² is added to the within-run variance.
			if want := math.Sqrt(p.SE*p.SE + 2*0.05*0.05); math.Abs(v.SE-want) > 1e-12 {
				t.Errorf("%s: SE %g, want %g", v.Quantile, v.SE, want)
			}
		default:
			if v.SE != p.SE {
				t.Errorf("%s: SE %g changed without a calibration entry (%g)", v.Quantile, v.SE, p.SE)
			}
		}
	}
}

func hasWarning(ws []Warning, k WarningKind) bool {
	for _, w := range ws {
		if w.Kind == k {
			return true
		}
	}
	return false
}

// A tracer attached as different variants on the two sides is a warning
// naming both; the same variant is none.
func TestCompareWarnsOfTracerVariants(t *testing.T) {
	base, cand := synthResult(t, 1, "abc", "", 0, 8), synthResult(t, 2, "abc", "", 0, 8)
	base.Scenarios[0].Tracers = []result.TracerInfo{{Name: "syscall", Variant: "tp_btf"}, {Name: "sched", Variant: "tp_btf"}}
	cand.Scenarios[0].Tracers = []result.TracerInfo{{Name: "syscall", Variant: "tp_btf"}, {Name: "sched", Variant: "raw_tp"}}
	rep, err := Compare(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []Warning
	for _, w := range rep.Scenarios[0].Warnings {
		if w.Kind == WarnTracerVariant {
			got = append(got, w)
		}
	}
	if len(got) != 1 || got[0].Detail != "sched" || got[0].Base != "tp_btf" || got[0].Cand != "raw_tp" {
		t.Errorf("tracer variant warnings %+v, want one for sched, tp_btf against raw_tp", got)
	}
}
