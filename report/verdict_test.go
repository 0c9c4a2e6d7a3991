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
	many := Estimate{BaseEvents: 1e6, CandEvents: 1e6}
	est := func(r, lo, hi float64) Estimate {
		e := many
		e.Base, e.Cand, e.Ratio, e.Lo, e.Hi = 1000, 1000*r, r, lo, hi
		return e
	}
	for _, c := range []struct {
		name    string
		e       Estimate
		gated   bool
		want    Kind
		settles bool
	}{
		{"regression", est(1.2, 1.1, 1.3), true, Regression, false},
		{"regression needs the CI above 1", est(1.2, 0.98, 1.4), true, Inconclusive, true},
		{"CI exactly at 1 is inconclusive", est(1.2, 1.0, 1.4), true, Inconclusive, true},
		{"below threshold with a tight CI is no change", est(1.08, 1.05, 1.11), true, NoChange, false},
		{"at the threshold is no change", est(1.1, 1.09, 1.11), true, NoChange, false},
		{"improvement", est(0.8, 0.7, 0.9), true, Improvement, false},
		{"improvement needs the CI below 1", est(0.8, 0.6, 1.01), true, Inconclusive, true},
		{"no change", est(1.0, 0.95, 1.05), true, NoChange, false},
		{"not gated", est(2, 1.5, 2.5), false, NotGated, false},
		{"few events past p99 cannot make a regression", func() Estimate { e := est(1.5, 1.2, 1.8); e.CandEvents = 600; return e }(), true, Inconclusive, true},
		{"few events past p99 cannot make an improvement", func() Estimate { e := est(0.5, 0.4, 0.6); e.BaseEvents = 1500; return e }(), true, Inconclusive, true},
		{"no events", Estimate{Base: math.NaN(), Cand: 5, Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), CandEvents: 10}, true, Inconclusive, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("m", p99, c.e, 0.10, c.gated, 5, 5)
			if v.Kind != c.want {
				t.Errorf("kind %q, want %q", v.Kind, c.want)
			}
			if (v.TrialsToSettle > 0) != c.settles {
				t.Errorf("TrialsToSettle %d, want it set: %v", v.TrialsToSettle, c.settles)
			}
		})
	}
}

func TestTrialsToSettle(t *testing.T) {
	// Ratio 1.2, interval reaching 0.98: half-width 0.22 against a distance
	// of 0.2 at 5 trials needs 5·1.21 = 6.05, with a 10% margin 7.
	if got := trialsToSettle(0.2, 0.22, 5, 5); got != 7 {
		t.Errorf("trialsToSettle = %d, want 7", got)
	}
	// Always more than we have.
	if got := trialsToSettle(0.2, 0.01, 5, 5); got != 6 {
		t.Errorf("trialsToSettle with a narrow interval = %d, want 6", got)
	}
	if got := trialsToSettle(0.001, 1, 5, 5); got != maxTrialsToSettle {
		t.Errorf("trialsToSettle far = %d, want cap %d", got, maxTrialsToSettle)
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
			w := warnings(c.p, c.e, c.gated, c.bt, c.ct)
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
		want := map[string]float64{"p50": 0.5, "p90": 0.07, "p99": 0.4, "p99.9": 0.25, "max": 0}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("thresholds (-want +got):\n%s", d)
		}
		kinds := map[string]Kind{}
		for _, v := range rep.Scenarios[0].Verdicts {
			kinds[v.Quantile] = v.Kind
		}
		if kinds["p90"] != Regression || kinds["p50"] != NoChange || kinds["p99"] != NoChange {
			t.Errorf("kinds %v: want p90 regression, p50 and p99 no change", kinds)
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
		if !strings.Contains(strings.Join(rep.Scenarios[0].Warnings, "\n"), "parameters differ") {
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
		all := strings.Join(rep.Warnings, "\n")
		for _, want := range []string{`kernel release is "6.1.0" in the baseline, "6.12.0" in the candidate`, `CPU count is "2" in the baseline, "4"`, `target accel is "" in the baseline, "tcg"`, "candidate ran under TCG", "candidate run is partial (interrupted)"} {
			if !strings.Contains(all, want) {
				t.Errorf("warnings lack %q:\n%s", want, all)
			}
		}
		if !strings.Contains(strings.Join(rep.Scenarios[0].Verdicts[0].Warnings, "\n"), "one candidate trial") {
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
		if d := cmp.Diff([]string{"metric sched.runq is in the candidate only; not compared"}, rep.Scenarios[0].Warnings); d != "" {
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
		if d := cmp.Diff([]string{"metric sched.wakeup_new has no events on either side; not compared"}, rep.Scenarios[0].Warnings); d != "" {
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
		rep, err := Compare(base, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Scenarios[0].Verdicts {
			if v.Gated && v.Kind != Inconclusive {
				t.Errorf("%s: %s with no candidate events, want inconclusive", v.Quantile, v.Kind)
			}
		}
	})
}

func TestEnvironmentWarningsNameTheTargetDifference(t *testing.T) {
	base := synthResult(t, 1, "p", "tcg", 0, 3)
	cand := synthResult(t, 2, "p", "tcg", 0, 3)
	base.Target = result.Target{Name: "a", Kind: "vm", Accel: "tcg", VCPUs: 2, MemMiB: 1024}
	cand.Target = result.Target{Name: "b", Kind: "vm", Accel: "tcg", VCPUs: 4, MemMiB: 1024, Cmdline: "nohz_full=1"}
	all := strings.Join(environmentWarnings(base, cand), "\n")
	for _, want := range []string{`target vCPUs is "2" in the baseline, "4" in the candidate`, `target kernel cmdline is "" in the baseline, "nohz_full=1"`, "TCG"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "memory") {
		t.Errorf("warns about memory, which is the same:\n%s", all)
	}
}
