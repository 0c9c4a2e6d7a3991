package report

import "testing"

func TestWording(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Warning{Kind: WarnEnvironment, Field: FieldCPUs, Base: "2", Cand: "4"}.String(), `environments differ: CPU count is "2" in the baseline, "4" in the candidate`},
		{Warning{Kind: WarnEnvironment, Field: FieldCPUs, Base: "2", Cand: "4"}.text("generic", "slow"), `environments differ: CPU count is "2" in generic, "4" in slow`},
		{Warning{Kind: WarnScenarioOneSide, Side: Baseline, Scenario: "a"}.String(), "scenario a is in the baseline only; not compared"},
		{Warning{Kind: WarnScenarioOneSide, Side: Candidate, Scenario: "a"}.text("ref", "t"), "scenario a is not in ref; not compared"},
		{Warning{Kind: WarnFewTailEvents, Side: Both, Percentile: "p99.9", BaseCount: 12, CandCount: 3}.String(), "few events beyond p99.9 (baseline 12, candidate 3; want ≥ 20): run longer or more trials"},
		{Warning{Kind: WarnOneTrial, Side: Candidate}.String(), "one candidate trial: the interval ignores trial-to-trial variation"},
		{Warning{Kind: WarnWithinRunOnly, Target: "host", Detail: "6.1.0"}.String(), "intervals cover within-run noise only: the baseline is stored from another run; run `tailgate calibrate SCENARIO --baseline DIR` on host (kernel 6.1.0) to measure the between-run spread"},
		{Warning{Kind: WarnNotCalibrated, Metric: "syscall.read", Percentile: "p99"}.String(), "no calibration for syscall.read p99: its interval covers within-run noise only"},
		{Warning{Kind: WarnTracerVariant, Detail: "sched", Base: "tp_btf", Cand: "raw_tp"}.text("6.1-local", "6.1-cloud"), "the sched tracer attached as tp_btf in 6.1-local and as raw_tp in 6.1-cloud: their programs cost differently, and part of a difference may be the tracer's"},
		{Warning{Kind: WarnInterference, BaseCount: 40, Base: "118", CandCount: 0, Cand: "118", Detail: "28%"}.String(), "other work took over 2% of the measured CPUs' time in 40 of 118 trials of the baseline and 0 of 118 of the candidate (at most 28%): disturbed trials spread the comparison, so it needs more of them; a quieter CPU or a runner of its own narrows it"},
		{Warning{Kind: WarnCalibrationMismatch, Field: FieldKernelRelease, Base: "6.1", Cand: "6.12"}.String(), `the calibration was measured with kernel release "6.12", the baseline with "6.1"; applied all the same`},
		{Stopping{Stop: true, Reason: StopRegression, Look: 2, Trials: 8, Gated: 3, Undecided: 2, Regressions: 1}.String(), "stopped after look 2 (8 trials per side): 1 regression confirmed, the gate fails whatever the 2 undecided tests would show"},
		{Stopping{Stop: true, Reason: StopBudget, Look: 8, Trials: 20, Gated: 3, Undecided: 1}.String(), "stopped after look 8 (20 trials per side): the budget is spent with 1 of 3 gated tests undecided (inconclusive)"},
		{Stopping{Stop: true, Reason: StopDecided, Look: 1, Trials: 6, Gated: 3}.String(), "stopped after look 1 (6 trials per side): every gated test is decided"},
		{Stopping{Stop: true, Reason: StopSingleLook, Trials: 20, Gated: 3, Undecided: 3}.String(), "compared once (20 trials per side): 3 of 3 gated tests undecided (inconclusive)"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

func TestVerdictLabel(t *testing.T) {
	for _, c := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Kind: Inconclusive, Ratio: 1.2, Threshold: 0.1, TrialsToSettle: 12}, "inconclusive (slower? ~12 trials)"},
		{Verdict{Kind: Inconclusive, Ratio: 1.02, Threshold: 0.1, TrialsToSettle: 30}, "inconclusive (no change? ~30 trials)"},
		{Verdict{Kind: Inconclusive, Ratio: 1.08, Threshold: 0.1, P: 0.001, Level: 0.005, TrialsToSettle: 30}, "inconclusive (slower? ~30 trials)"},
		{Verdict{Kind: Inconclusive, Ratio: 0.8, Threshold: 0.1, TrialsToSettle: maxTrialsToSettle}, "inconclusive (faster? >1000 trials)"},
	} {
		if got := verdictLabel(c.v); got != c.want {
			t.Errorf("verdictLabel(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}
