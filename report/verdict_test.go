package report

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
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
		{"few events past p99 cannot make a regression", fewCand(est(1.5, 0.05)), true, Inconclusive, true},
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
	if got := trialsToSettle(0.001, 1, 0, 2, 5, 5); got != maxTrialsToSettle {
		t.Errorf("trialsToSettle far = %d, want cap %d", got, maxTrialsToSettle)
	}
	// Between-run excess does not shrink with trials: if it alone fills
	// the room, no count settles it.
	if got := trialsToSettle(0.1, 0.001, 0.02, 1, 5, 5); got != maxTrialsToSettle {
		t.Errorf("trialsToSettle past the excess = %d, want cap %d", got, maxTrialsToSettle)
	}
	if got := trialsToSettle(0, 0.1, 0, 1, 5, 5); got != 0 {
		t.Errorf("trialsToSettle at zero distance = %d, want 0", got)
	}
}

func TestWarnings(t *testing.T) {
	p999, _ := LookupPercentile("p99.9")
	max, _ := LookupPercentile("max")
	for _, c := range []struct {
		name     string
		p        Percentile
		e        Estimate
		gated    bool
		bt, ct   int
		contains []string
		none     bool
	}{
		{"plenty", p999, Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 5, 5, nil, true},
		{"few beyond p99.9", p999, Estimate{BaseEvents: 15000, CandEvents: 100000}, true, 5, 5, []string{"few events beyond p99.9", "baseline 15"}, false},
		{"max not gated is quiet", max, Estimate{BaseEvents: 100000, CandEvents: 100000}, false, 5, 5, nil, true},
		{"max gated warns", max, Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 5, 5, []string{"few events beyond max"}, false},
		{"one trial", p999, Estimate{BaseEvents: 100000, CandEvents: 100000}, true, 1, 5, []string{"one baseline trial"}, false},
		{"no events", p999, Estimate{CandEvents: 100000}, true, 5, 5, []string{"baseline has no events"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := warningStrings(warnings(c.p, c.e, c.gated, c.bt, c.ct))
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

func synthResult(t *testing.T, seed uint64, params, accel string, shift float64, trials int) *result.Result {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	d := synthetic{Median: 20000, Sigma: 0.6, Scale: 1 + shift}
	m := &result.Metric{Unit: "ns"}
	for _, h := range d.trials(r, trials, 20000, 0.02) {
		m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h)})
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Target:      result.Target{Name: "host", Kind: "host", Accel: accel},
		Environment: result.Environment{KernelRelease: "6.1.0", CPUModel: "AMD EPYC", CPUs: 2},
		Scenarios: []result.Scenario{{
			Name:       "getppid",
			Definition: []byte(`{"name":"getppid","gate":{"*":{"p50":0.5},"syscall.getppid":{"p90":0.07}}}`),
			Params:     params,
			Metrics:    map[string]*result.Metric{"syscall.getppid": m},
			Trials:     trials,
		}},
	}
}

func TestCompare(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	t.Run("gate block and CLI", func(t *testing.T) {
		rep, err := Compare(base, synthResult(t, 2, "abc", "", 0.3, 5), Options{Thresholds: []Threshold{{Percentile: "p99", Value: 0.4}}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, v := range rep.Scenarios[0].Verdicts {
			got[v.Quantile] = v.Threshold
		}
		// The gate block names p50 (every metric) and p90; the command line
		// adds p99. p99.9 and max are reported, not gated.
		want := map[string]float64{"p50": 0.5, "p90": 0.07, "p99": 0.4, "p99.9": 0, "max": 0}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("thresholds (-want +got):\n%s", d)
		}
		kinds := map[string]Kind{}
		for _, v := range rep.Scenarios[0].Verdicts {
			kinds[v.Quantile] = v.Kind
		}
		if kinds["p90"] != Regression || kinds["p50"] != NoChange || kinds["p99"] != NoChange || kinds["p99.9"] != NotGated {
			t.Errorf("kinds %v: want p90 regression, p50 and p99 no change, p99.9 not gated", kinds)
		}
		if c := rep.Tally(); c.Gated != 3 || rep.Tests != 3 {
			t.Errorf("%d gated verdicts, a family of %d; want 3 and 3", c.Gated, rep.Tests)
		}
		if !rep.Failed(false) {
			t.Error("Failed() = false with a regression")
		}
	})
	t.Run("params differ", func(t *testing.T) {
		_, err := Compare(base, synthResult(t, 2, "xyz", "", 0, 5), Options{})
		if !errors.Is(err, ErrParamsDiffer) {
			t.Fatalf("err %v, want ErrParamsDiffer", err)
		}
		rep, err := Compare(base, synthResult(t, 2, "xyz", "", 0, 5), Options{Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(warningStrings(rep.Scenarios[0].Warnings), "\n"), "parameters differ") {
			t.Errorf("forced compare lacks a warning: %q", rep.Scenarios[0].Warnings)
		}
	})
	t.Run("environment and tcg", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "tcg", 0, 1)
		c.Environment.CPUs = 4
		c.Environment.KernelRelease = "6.12.0"
		c.Partial, c.Error = true, "interrupted"
		rep, err := Compare(base, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(warningStrings(rep.Warnings), "\n")
		for _, want := range []string{`kernel release is "6.1.0" in the baseline, "6.12.0" in the candidate`, `CPU count is "2" in the baseline, "4"`, `target accel is "" in the baseline, "tcg"`, "candidate ran under TCG", "candidate run is partial (interrupted)"} {
			if !strings.Contains(all, want) {
				t.Errorf("warnings lack %q:\n%s", want, all)
			}
		}
		if !strings.Contains(strings.Join(warningStrings(rep.Scenarios[0].Verdicts[0].Warnings), "\n"), "one candidate trial") {
			t.Errorf("verdict warnings lack one trial: %q", rep.Scenarios[0].Verdicts[0].Warnings)
		}
	})
	t.Run("metric on one side", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "", 0, 5)
		c.Scenarios[0].Metrics["sched.runq"] = c.Scenarios[0].Metrics["syscall.getppid"]
		rep, err := Compare(base, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"metric sched.runq is in the candidate only; not compared"}, warningStrings(rep.Scenarios[0].Warnings)); d != "" {
			t.Error(d)
		}
	})
	t.Run("no events on either side", func(t *testing.T) {
		b, c := synthResult(t, 1, "abc", "", 0, 5), synthResult(t, 2, "abc", "", 0, 5)
		empty := func() *result.Metric { return &result.Metric{Trials: []result.Trial{{Histogram: hist.New()}}} }
		b.Scenarios[0].Metrics["sched.wakeup_new"] = empty()
		c.Scenarios[0].Metrics["sched.wakeup_new"] = empty()
		rep, err := Compare(b, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Scenarios[0].Verdicts {
			if v.Metric == "sched.wakeup_new" {
				t.Fatalf("verdict for a metric with no events: %+v", v)
			}
		}
		if d := cmp.Diff([]string{"metric sched.wakeup_new has no events on either side; not compared"}, warningStrings(rep.Scenarios[0].Warnings)); d != "" {
			t.Error(d)
		}
	})
	t.Run("no scenario in common", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "", 0, 5)
		c.Scenarios[0].Name = "other"
		if _, err := Compare(base, c, Options{}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("empty histogram", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "", 0, 5)
		c.Scenarios[0].Metrics["syscall.getppid"] = &result.Metric{Trials: []result.Trial{{Histogram: hist.New()}}}
		_, err := Compare(base, c, Options{})
		if !errors.Is(err, ErrCandidateIncomplete) || !strings.Contains(err.Error(), "no events of syscall.getppid") {
			t.Errorf("candidate without events of a gated metric: %v, want ErrCandidateIncomplete naming it", err)
		}
	})
}

// A candidate that lacks what the baseline gates is a broken run, not a
// pass: no trials, no metrics, no gated metric, no scenarios.
func TestCandidateMissingGatedMetricIsBroken(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 5)
	for _, c := range []struct {
		name  string
		strip func(r *result.Result)
		want  string
	}{
		{"zero trials", func(r *result.Result) {
			r.Scenarios[0].Trials = 0
			r.Scenarios[0].Metrics["syscall.getppid"].Trials = nil
		}, "no every trial, no trials of syscall.getppid"},
		{"empty metrics", func(r *result.Result) { r.Scenarios[0].Metrics = map[string]*result.Metric{} }, "no metric syscall.getppid"},
		{"a null metric", func(r *result.Result) { r.Scenarios[0].Metrics["syscall.getppid"] = nil }, "no metric syscall.getppid"},
		{"another metric only", func(r *result.Result) {
			m := r.Scenarios[0].Metrics["syscall.getppid"]
			r.Scenarios[0].Metrics = map[string]*result.Metric{"sched.runq": m}
		}, "no metric syscall.getppid"},
		{"no scenarios", func(r *result.Result) { r.Scenarios = nil }, "it has no scenarios"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cand := synthResult(t, 2, "abc", "", 0, 5)
			c.strip(cand)
			_, err := Compare(base, cand, Options{})
			if !errors.Is(err, ErrCandidateIncomplete) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrCandidateIncomplete with %q", err, c.want)
			}
		})
	}
}

// The judge comes from the base: a candidate whose scenario loosens its
// own gate block is judged by the baseline's, with a warning naming the
// difference.
func TestCandidateCannotLoosenItsJudge(t *testing.T) {
	base := synthResult(t, 1, "abc", "", 0, 8)
	cand := synthResult(t, 2, "abc", "", 0.7, 8)
	cand.Scenarios[0].Gate = map[string]map[string]float64{"*": {"p50": 1000}, "syscall.getppid": {"p90": 1000}}
	rep, err := Compare(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Scenarios[0].Verdicts {
		switch v.Quantile {
		case "p50":
			if v.Threshold != 0.5 {
				t.Errorf("p50 gated at %g, want the baseline's 0.5", v.Threshold)
			}
		case "p90":
			if v.Threshold != 0.07 || v.Kind != Regression {
				t.Errorf("p90: threshold %g, %s; want the baseline's 0.07 and a regression", v.Threshold, v.Kind)
			}
		}
	}
	ws := strings.Join(warningStrings(rep.Scenarios[0].Warnings), "\n")
	for _, want := range []string{
		"the candidate's gate block differs at every metric p50 (the baseline gates it at 50%, the candidate gates it at 100000%): the baseline's policy is applied",
		"differs at syscall.getppid p90 (the baseline gates it at 7%, the candidate gates it at 100000%)",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("no warning %q in:\n%s", want, ws)
		}
	}
}

func TestEnvironmentWarningsNameTheTargetDifference(t *testing.T) {
	base := synthResult(t, 1, "p", "tcg", 0, 3)
	cand := synthResult(t, 2, "p", "tcg", 0, 3)
	base.Target = result.Target{Name: "a", Kind: "vm", Accel: "tcg", VCPUs: 2, MemMiB: 1024}
	cand.Target = result.Target{Name: "b", Kind: "vm", Accel: "tcg", VCPUs: 4, MemMiB: 1024, Cmdline: "nohz_full=1"}
	all := strings.Join(warningStrings(environmentWarnings(base, cand)), "\n")
	for _, want := range []string{`target vCPUs is "2" in the baseline, "4" in the candidate`, `target kernel cmdline is "" in the baseline, "nohz_full=1"`, "TCG"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "memory") {
		t.Errorf("warns about memory, which is the same:\n%s", all)
	}
}

// Times of two clocks are not compared: virtual against real time, or
// virtual time of two shifts, is refused; two virtual-time sides get the
// one line saying what virtual time counts, and no TCG warning, whose
// emulated timings are the host's noise and not virtual time's.
func TestCompareClocks(t *testing.T) {
	shift := func(n int) *int { return &n }
	virtual := func(seed uint64, n int) *result.Result {
		r := synthResult(t, seed, "p", "tcg", 0, 3)
		r.Target = result.Target{Name: "a", Kind: "vm", Accel: "tcg", VCPUs: 1, Clock: result.ClockVirtual, IcountShift: shift(n)}
		return r
	}
	real := synthResult(t, 3, "p", "tcg", 0, 3)
	real.Target = result.Target{Name: "a", Kind: "vm", Accel: "tcg", VCPUs: 2}
	for _, c := range []struct {
		name       string
		base, cand *result.Result
		want       string
	}{
		{"virtual against real", virtual(1, 0), real, "clocks differ: the baseline ran in virtual time (shift 0), the candidate in real time"},
		{"real against virtual", real, virtual(1, 0), "clocks differ: the baseline ran in real time, the candidate in virtual time (shift 0)"},
		{"two shifts", virtual(1, 0), virtual(2, 3), "the candidate in virtual time (shift 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compare(c.base, c.cand, Options{})
			if !errors.Is(err, ErrClocksDiffer) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line of ErrClocksDiffer saying %q", err, c.want)
			}
		})
	}
	rep, err := Compare(virtual(1, 0), virtual(2, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warningStrings(rep.Warnings), "\n")
	if strings.Count(all, "virtual time: each guest instruction counts 1 ns") != 1 || strings.Contains(all, "TCG") {
		t.Errorf("warnings of two virtual-time sides:\n%s\nwant the virtual-time line once and no TCG warning", all)
	}
}
