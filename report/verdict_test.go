package report_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

func synthResult(t *testing.T, seed uint64, params, accel string, shift float64, trials int) *result.Result {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	d := statstest.Synthetic{Median: 20000, Sigma: 0.6, Scale: 1 + shift}
	m := &result.Metric{Unit: "ns"}
	for _, h := range d.Trials(r, trials, 20000, 0.02) {
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
		rep, err := report.Compare(base, synthResult(t, 2, "abc", "", 0.3, 5), report.Options{Thresholds: []stats.Threshold{{Percentile: "p99", Value: 0.4}}})
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
		kinds := map[string]stats.Kind{}
		for _, v := range rep.Scenarios[0].Verdicts {
			kinds[v.Quantile] = v.Kind
		}
		if kinds["p90"] != stats.Regression || kinds["p50"] != stats.NoChange || kinds["p99"] != stats.NoChange || kinds["p99.9"] != stats.NotGated {
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
		_, err := report.Compare(base, synthResult(t, 2, "xyz", "", 0, 5), report.Options{})
		if !errors.Is(err, report.ErrParamsDiffer) {
			t.Fatalf("err %v, want ErrParamsDiffer", err)
		}
		rep, err := report.Compare(base, synthResult(t, 2, "xyz", "", 0, 5), report.Options{Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(warningStrings(rep.Scenarios[0].Warnings), "\n"), "parameters differ") {
			t.Errorf("forced compare lacks a warning: %q", warningStrings(rep.Scenarios[0].Warnings))
		}
	})
	t.Run("environment and tcg", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "tcg", 0, 1)
		c.Environment.CPUs = 4
		c.Environment.KernelRelease = "6.12.0"
		c.Partial, c.Error = true, "interrupted"
		rep, err := report.Compare(base, c, report.Options{})
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
			t.Errorf("verdict warnings lack one trial: %q", warningStrings(rep.Scenarios[0].Verdicts[0].Warnings))
		}
	})
	t.Run("metric on one side", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "", 0, 5)
		c.Scenarios[0].Metrics["sched.runq"] = c.Scenarios[0].Metrics["syscall.getppid"]
		rep, err := report.Compare(base, c, report.Options{})
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
		rep, err := report.Compare(b, c, report.Options{})
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
		if _, err := report.Compare(base, c, report.Options{}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("empty histogram", func(t *testing.T) {
		c := synthResult(t, 2, "abc", "", 0, 5)
		c.Scenarios[0].Metrics["syscall.getppid"] = &result.Metric{Trials: []result.Trial{{Histogram: hist.New()}}}
		_, err := report.Compare(base, c, report.Options{})
		if !errors.Is(err, report.ErrCandidateIncomplete) || !strings.Contains(err.Error(), "no events of syscall.getppid") {
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
			_, err := report.Compare(base, cand, report.Options{})
			if !errors.Is(err, report.ErrCandidateIncomplete) || !strings.Contains(err.Error(), c.want) {
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
	rep, err := report.Compare(base, cand, report.Options{})
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
			if v.Threshold != 0.07 || v.Kind != stats.Regression {
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
	all := strings.Join(warningStrings(report.EnvironmentWarnings(base, cand)), "\n")
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
			_, err := report.Compare(c.base, c.cand, report.Options{})
			if !errors.Is(err, report.ErrClocksDiffer) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line of ErrClocksDiffer saying %q", err, c.want)
			}
		})
	}
	rep, err := report.Compare(virtual(1, 0), virtual(2, 0), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warningStrings(rep.Warnings), "\n")
	if strings.Count(all, "virtual time: each guest instruction counts 1 ns") != 1 || strings.Contains(all, "TCG") {
		t.Errorf("warnings of two virtual-time sides:\n%s\nwant the virtual-time line once and no TCG warning", all)
	}
}

// warningStrings words ws as a two-sided report does.
func warningStrings(ws []stats.Warning) []string {
	if len(ws) == 0 {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = render.WarningText(w)
	}
	return out
}

// Two Results written by different tailgates are compared with a warning
// that names both: a release may measure a metric another way (the BPF
// run statistics, on in every trial before, moved syscall-read's p50).
func TestCompareWarnsOfAnotherTailgate(t *testing.T) {
	base, cand := synthResult(t, 1, "abc", "", 0, 5), synthResult(t, 2, "abc", "", 0, 5)
	warned := func() []stats.Warning {
		rep, err := report.Compare(base, cand, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var ws []stats.Warning
		for _, w := range rep.Warnings {
			if w.Field == stats.FieldTailgate {
				ws = append(ws, w)
			}
		}
		return ws
	}
	base.Tailgate = result.Version{Version: "v0.3.1", Commit: "abc123"}
	cand.Tailgate = base.Tailgate
	if ws := warned(); len(ws) != 0 {
		t.Errorf("one tailgate on both sides: warnings %+v", ws)
	}
	cand.Tailgate.Commit = "def456"
	ws := warned()
	if len(ws) != 1 || ws[0].Kind != report.WarnEnvironment || ws[0].Base != "v0.3.1 (abc123)" || ws[0].Cand != "v0.3.1 (def456)" {
		t.Errorf("tailgates of two commits: warnings %+v, want one naming both", ws)
	}
}
