package render

import (
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"strings"
	"testing"
)

func TestWording(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{WarningText(stats.Warning{Kind: report.WarnEnvironment, Field: stats.FieldCPUs, Base: "2", Cand: "4"}), `environments differ: CPU count is "2" in the baseline, "4" in the candidate`},
		{warningText(stats.Warning{Kind: report.WarnEnvironment, Field: stats.FieldCPUs, Base: "2", Cand: "4"}, "generic", "slow"), `environments differ: CPU count is "2" in generic, "4" in slow`},
		{WarningText(stats.Warning{Kind: report.WarnScenarioOneSide, Side: stats.Baseline, Scenario: "a"}), "scenario a is in the baseline only; not compared"},
		{warningText(stats.Warning{Kind: report.WarnScenarioOneSide, Side: stats.Candidate, Scenario: "a"}, "ref", "t"), "scenario a is not in ref; not compared"},
		{WarningText(stats.Warning{Kind: stats.WarnFewTailEvents, Side: stats.Both, Percentile: "p99.9", BaseCount: 12, CandCount: 3}), "few events beyond p99.9 (baseline 12, candidate 3; want ≥ 20): run longer or more trials"},
		{WarningText(stats.Warning{Kind: stats.WarnDecidedOnFewTail, Side: stats.Candidate, Percentile: "p99", BaseCount: 190, CandCount: 5, Base: "760", Cand: "48", Detail: stats.StarvedCollapse}), "p99 decided on few events beyond it (the candidate 5; the rule wants 20) because the candidate did 48 events a trial, the baseline 760: the slower side is short of events because it is slower"},
		{warningText(stats.Warning{Kind: stats.WarnDecidedOnFewTail, Side: stats.Both, Percentile: "p99", BaseCount: 12, CandCount: 5, Base: "60", Cand: "25", Detail: stats.StarvedInterval}, "fast", "slow"), "p99 decided on few events beyond it (fast 12, slow 5; the rule wants 20) because the whole interval is past the threshold"},
		{WarningText(stats.Warning{Kind: stats.WarnOneTrial, Side: stats.Candidate}), "one candidate trial: the interval ignores trial-to-trial variation"},
		{WarningText(stats.Warning{Kind: stats.WarnWithinRunOnly, Target: "host", Detail: "6.1.0"}), "intervals cover within-run noise only: the baseline is stored from another run; run `tailgate calibrate SCENARIO --baseline DIR` on host (kernel 6.1.0) to measure the between-run spread"},
		{WarningText(stats.Warning{Kind: stats.WarnNotCalibrated, Metric: "syscall.read", Percentile: "p99"}), "no calibration for syscall.read p99: its interval covers within-run noise only"},
		{warningText(stats.Warning{Kind: report.WarnTracerVariant, Detail: "sched", Base: "tp_btf", Cand: "raw_tp"}, "6.1-local", "6.1-cloud"), "the sched tracer attached as tp_btf in 6.1-local and as raw_tp in 6.1-cloud: their programs cost differently, and part of a difference may be the tracer's"},
		{WarningText(stats.Warning{Kind: stats.WarnInterference, BaseCount: 40, Base: "118", CandCount: 0, Cand: "118", Detail: "28%"}), "other work took over 2% of the measured CPUs' time in 40 of 118 trials of the baseline and 0 of 118 of the candidate (at most 28%): disturbed trials spread the comparison, so it needs more of them; a quieter CPU or a runner of its own narrows it"},
		{WarningText(stats.Warning{Kind: report.WarnCalibrationMismatch, Field: stats.FieldKernelRelease, Base: "6.1", Cand: "6.12"}), `the calibration was measured with kernel release "6.12", the baseline with "6.1"; applied all the same`},
		{stoppingText(report.Stopping{Stop: true, Reason: report.StopRegression, Look: 2, Trials: 8, Gated: 3, Undecided: 2, Regressions: 1}), "stopped after look 2 (8 trials per side): 1 regression confirmed, the gate fails whatever the 2 undecided tests would show"},
		{stoppingText(report.Stopping{Stop: true, Reason: report.StopBudget, Look: 8, Trials: 20, Gated: 3, Undecided: 1}), "stopped after look 8 (20 trials per side): the budget is spent with 1 of 3 gated tests undecided (inconclusive)"},
		{stoppingText(report.Stopping{Stop: true, Reason: report.StopDecided, Look: 1, Trials: 6, Gated: 3}), "stopped after look 1 (6 trials per side): every gated test is decided"},
		{stoppingText(report.Stopping{Stop: true, Reason: report.StopSingleLook, Trials: 20, Gated: 3, Undecided: 3}), "compared once (20 trials per side): 3 of 3 gated tests undecided (inconclusive)"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

func TestVerdictLabel(t *testing.T) {
	for _, c := range []struct {
		v    stats.Verdict
		want string
	}{
		{stats.Verdict{Kind: stats.Inconclusive, Ratio: 1.2, Threshold: 0.1, TrialsToSettle: 12}, "inconclusive (slower? ~12 trials)"},
		{stats.Verdict{Kind: stats.Inconclusive, Ratio: 1.02, Threshold: 0.1, TrialsToSettle: 30}, "inconclusive (no change? ~30 trials)"},
		{stats.Verdict{Kind: stats.Inconclusive, Ratio: 1.08, Threshold: 0.1, P: 0.001, Level: 0.005, TrialsToSettle: 30}, "inconclusive (slower? ~30 trials)"},
		{stats.Verdict{Kind: stats.Inconclusive, Ratio: 0.8, Threshold: 0.1, TrialsToSettle: stats.MaxTrialsToSettle}, "inconclusive (faster? >1000 trials)"},
	} {
		if got := verdictLabel(c.v); got != c.want {
			t.Errorf("verdictLabel(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestWarnings(t *testing.T) {
	p999, _ := stats.LookupPercentile("p99.9")
	max, _ := stats.LookupPercentile("max")
	for _, c := range []struct {
		name     string
		p        stats.Percentile
		e        stats.Estimate
		gated    bool
		bt, ct   int
		contains []string
		none     bool
	}{
		{"plenty", p999, stats.Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 5, 5, nil, true},
		{"few beyond p99.9", p999, stats.Estimate{BaseEvents: 15000, CandEvents: 100000}, true, 5, 5, []string{"few events beyond p99.9", "baseline 15"}, false},
		{"max not gated is quiet", max, stats.Estimate{BaseEvents: 100000, CandEvents: 100000}, false, 5, 5, nil, true},
		{"max gated warns", max, stats.Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 5, 5, []string{"few events beyond max"}, false},
		{"one trial", p999, stats.Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 1, 5, []string{"one baseline trial"}, false},
		{"no events", p999, stats.Estimate{CandEvents: 100000}, true, 5, 5, []string{"baseline has no events"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := warningStrings(stats.Judge("m", c.p, c.e, 0.10, c.gated, c.bt, c.ct).Warnings)
			if c.none && len(w) > 0 {
				t.Errorf("warnings %q, want none", w)
			}
			all := strings.Join(w, "\n")
			for _, s := range c.contains {
				if !strings.Contains(all, s) {
					t.Errorf("warnings %q lack %q", w, s)
				}
			}
		})
	}
}
