package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// A report judged at a later look spends less alpha: the same data that
// make a regression at a single look may not at look 5.
func TestCompareLook(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	cand := synthResult(t, 2, "abc", "", 0.3, 5)
	single, err := report.Compare(base, cand, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	later, err := report.Compare(base, cand, report.Options{Look: 5})
	if err != nil {
		t.Fatal(err)
	}
	if single.Alpha != stats.DefaultAlpha || later.Alpha != (stats.Sequential{}).AlphaAt(5) || later.Look != 5 {
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
	v := func(k stats.Kind) stats.Verdict {
		return stats.Verdict{Kind: k, Gated: k != stats.NotGated, BaseTrials: 8, CandTrials: 9}
	}
	rep := func(look int, kinds ...stats.Kind) *report.Report {
		var s report.ScenarioReport
		for _, k := range kinds {
			s.Verdicts = append(s.Verdicts, v(k))
		}
		return &report.Report{Look: look, Scenarios: []report.ScenarioReport{s}}
	}
	for _, c := range []struct {
		name    string
		r       *report.Report
		budget  bool
		stop    bool
		reason  report.StopReason
		decided bool
	}{
		{"all decided", rep(2, stats.NoChange, stats.Improvement, stats.NotGated, stats.NotGated), false, true, report.StopDecided, true},
		{"a regression settles the exit code", rep(2, stats.Regression, stats.Inconclusive), false, true, report.StopRegression, false},
		{"undecided goes on", rep(2, stats.NoChange, stats.Inconclusive), false, false, "", false},
		{"budget spent", rep(8, stats.NoChange, stats.Inconclusive), true, true, report.StopBudget, false},
		{"a single look stops", rep(0, stats.Inconclusive), false, true, report.StopSingleLook, false},
		{"nothing gated is decided", rep(1, stats.NotGated), false, true, report.StopDecided, true},
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
	rep, err := report.Compare(two(1, 0), two(2, 0.5), report.Options{})
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
				if v.Kind != stats.Regression {
					t.Errorf("%s %s: %s, want regression", s.Name, v.Quantile, v.Kind)
				}
			}
		}
	}
	if math.Min(levels[0], levels[1]) != stats.DefaultAlpha/2 || math.Max(levels[0], levels[1]) != stats.DefaultAlpha {
		t.Errorf("Holm levels %v, want %g and %g", levels, stats.DefaultAlpha/2, stats.DefaultAlpha)
	}
}

func TestStoredWarnings(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	cand := synthResult(t, 2, "abc", "", 0, 5)
	rep, err := report.Compare(base, cand, report.Options{Stored: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(rep.Warnings, stats.WarnWithinRunOnly) {
		t.Errorf("stored, uncalibrated: warnings %v lack %q", rep.Warnings, stats.WarnWithinRunOnly)
	}
	if got := strings.Join(warningStrings(rep.Warnings), "\n"); !strings.Contains(got, "`tailgate calibrate SCENARIO --baseline DIR` on host (kernel 6.1.0)") {
		t.Errorf("worded:\n%s", got)
	}
	cal := &stats.Calibration{Schema: 1, Target: "other", KernelRelease: "6.1.0", Runs: 5, Scenarios: map[string]map[string]map[string]stats.Spread{
		"getppid": {"syscall.getppid": {"p50": {UpperSD: 0.05}, "p90": {UpperSD: 0.05}}},
	}}
	// The gate block gates p50 and p90; the command line adds p99, which the
	// calibration lacks.
	opt := report.Options{Stored: true, Calibration: cal, Thresholds: []stats.Threshold{{Percentile: "p99", Value: 0.1}}}
	rep, err = report.Compare(base, cand, opt)
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(rep.Warnings, stats.WarnWithinRunOnly) || !hasWarning(rep.Warnings, report.WarnCalibrationMismatch) {
		t.Errorf("calibrated for another target: warnings %v", rep.Warnings)
	}
	if sw := rep.Scenarios[0].Warnings; len(sw) != 1 || sw[0].Kind != stats.WarnNotCalibrated || sw[0].Percentile != "p99" {
		t.Errorf("scenario warnings %+v, want one: p99 not calibrated", sw)
	}
	plain, _ := report.Compare(base, cand, report.Options{Thresholds: opt.Thresholds})
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

func hasWarning(ws []stats.Warning, k stats.WarningKind) bool {
	for _, w := range ws {
		if w.Kind == k {
			return true
		}
	}
	return false
}

// variantWarningsOf is the tracer variant warnings of rep's first scenario.
func variantWarningsOf(rep *report.Report) []stats.Warning {
	var got []stats.Warning
	for _, w := range rep.Scenarios[0].Warnings {
		if w.Kind == report.WarnTracerVariant {
			got = append(got, w)
		}
	}
	return got
}

// A tracer attached as different variants on the two sides is a warning
// naming both; the same variant is none.
func TestCompareWarnsOfTracerVariants(t *testing.T) {
	base, cand := synthResult(t, 1, "abc", "", 0, 8), synthResult(t, 2, "abc", "", 0, 8)
	base.Scenarios[0].Tracers = []result.TracerInfo{{Name: "syscall", Variant: "tp_btf"}, {Name: "sched", Variant: "tp_btf"}}
	cand.Scenarios[0].Tracers = []result.TracerInfo{{Name: "syscall", Variant: "tp_btf"}, {Name: "sched", Variant: "raw_tp"}}
	rep, err := report.Compare(base, cand, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := variantWarningsOf(rep)
	if len(got) != 1 || got[0].Detail != "sched" || got[0].Base != "tp_btf" || got[0].Cand != "raw_tp" {
		t.Errorf("tracer variant warnings %+v, want one for sched, tp_btf against raw_tp", got)
	}
}

// The request tracer records the tracepoints it chose: the same variant
// on other hooks (the socket layer's on one kernel, sys_exit on another)
// is a warning naming both; hooks recorded on one side only (a Result of
// before they were recorded) are none.
func TestCompareWarnsOfTracerHooks(t *testing.T) {
	sock, exit := []string{"sock_recv_length", "sock_send_length"}, []string{"sys_exit"}
	for _, tc := range []struct {
		base, cand []string
		want       string // the warning's Base, or "" for none
	}{
		{sock, exit, "tp_btf on sock_recv_length and sock_send_length"},
		{sock, sock, ""},
		{nil, sock, ""},
	} {
		base, cand := synthResult(t, 1, "abc", "", 0, 8), synthResult(t, 2, "abc", "", 0, 8)
		base.Scenarios[0].Tracers = []result.TracerInfo{{Name: "request", Variant: "tp_btf", Hooks: tc.base}}
		cand.Scenarios[0].Tracers = []result.TracerInfo{{Name: "request", Variant: "tp_btf", Hooks: tc.cand}}
		rep, err := report.Compare(base, cand, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := variantWarningsOf(rep)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("hooks %v against %v: warnings %+v, want none", tc.base, tc.cand, got)
		case tc.want != "" && (len(got) != 1 || got[0].Base != tc.want || got[0].Cand != "tp_btf on sys_exit"):
			t.Errorf("hooks %v against %v: warnings %+v, want one from %q to %q", tc.base, tc.cand, got, tc.want, "tp_btf on sys_exit")
		}
	}
}
