package report_test

import (
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// seededResult is a Result of boots in virtual time, seeds 1..len(at),
// whose metric "path" is pathNs in every boot and "sched" is at[i] in the
// boot of seed i+1; both gated at p50 ±2%. The target's name reaches the
// guest, so two names are two draws per seed, one name common draws.
func seededResult(name string, pathNs float64, at []float64) *result.Result {
	metric := func(v func(i int) float64) *result.Metric {
		m := &result.Metric{Unit: "ns"}
		for i := range at {
			h := hist.New()
			h.RecordN(uint64(v(i)), 1000)
			m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h), Seed: uint64(i + 1), Ops: 1000})
		}
		return m
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Target:      result.Target{Name: name, Kind: "vm", Accel: "tcg", VCPUs: 1, Clock: result.ClockVirtual},
		Environment: result.Environment{KernelRelease: "6.1.0"},
		Scenarios: []result.Scenario{{
			Name:       "s",
			Definition: []byte(`{"name":"s","gate":{"*":{"p50":0.02}}}`),
			Trials:     len(at),
			Metrics: map[string]*result.Metric{
				"path":  metric(func(int) float64 { return pathNs }),
				"sched": metric(func(i int) float64 { return at[i] }),
			},
		}},
	}
}

// Seeded boots in virtual time are compared seed by seed; each gated
// test's nuisance band is said in a line; a test whose threshold lies
// inside its band (sched, which layout moves by ±30% at a 2% threshold)
// is never decided either way, even in an A/A whose seeds drew
// differently on each side, while the path metric no seed moves decides:
// no change in the A/A, a regression at +5%. A report held so is done:
// Decided. Two targets' seeds are two samples (no rounds).
func TestSeedsBandHoldsThresholdInside(t *testing.T) {
	base := []float64{5000, 6500, 5000, 5000, 6500, 5000, 5000, 6500, 5000, 6500}
	head := []float64{6500, 5000, 5000, 6500, 6500, 5000, 6500, 5000, 5000, 5000}
	for _, c := range []struct {
		name     string
		headPath float64
		path     stats.Kind
	}{
		{"A/A", 3000, stats.NoChange},
		{"path +5%", 3150, stats.Regression},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := report.Compare(seededResult("base", 3000, base), seededResult("head", c.headPath, head), report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sr := rep.Scenarios[0]
			kinds := map[string]stats.Verdict{}
			for _, v := range sr.Verdicts {
				if v.Quantile == "p50" {
					kinds[v.Metric] = v
				}
			}
			if v := kinds["path"]; v.Kind != c.path || v.Rounds != 0 || v.BaseTrials != 10 || v.CandTrials != 10 {
				t.Errorf("path p50: %s over %d seed pairs, %d+%d seeds, want %s over two samples of 10", v.Kind, v.Rounds, v.BaseTrials, v.CandTrials, c.path)
			}
			sched := kinds["sched"]
			if sched.Kind != stats.Inconclusive || !sched.InsideBand() || sched.TrialsToSettle != 0 {
				t.Errorf("sched p50: %s, inside band %v, %d trials to settle; want held inconclusive, nothing to settle it", sched.Kind, sched.InsideBand(), sched.TrialsToSettle)
			}
			held := strings.Join(warningStrings(sched.Warnings), "\n")
			if !strings.Contains(held, "p50: unreachable: its threshold is inside its nuisance band (±30% across 20 seeds), so it is never decided either way") {
				t.Errorf("sched p50's warnings:\n%s\nwant the unreachable line", held)
			}
			lines := strings.Join(warningStrings(sr.Warnings), "\n")
			for _, want := range []string{"nuisance band of sched p50 across 20 seeded boots: ±30%", "nuisance band of path p50 across 20 seeded boots: ±0%"} {
				if !strings.Contains(lines, want) {
					t.Errorf("scenario warnings:\n%s\nwant %q", lines, want)
				}
			}
			if c := rep.Tally(); c.Unreachable != 1 || c.Inconclusive != 1 {
				t.Errorf("tally %+v, want the one inconclusive unreachable", c)
			}
			if !rep.Decided() {
				t.Error("a report whose every test is decided or held inside its band is not Decided: a gate would run on to its budget")
			}
		})
	}
}

// Where both sides' guests were given the same bytes, seed i is the same
// draw on both, and the seeds are paired; where anything differs (here the
// target's name) they are two samples, which decide in fewer seeds: a
// +5% path shift over 6 seeds a side is a regression as two samples
// (1/C(12, 6) = 1/924 one-sided, inside a third of 1%), and out of reach
// paired (2^-6 = 1/64). Trials sharing a seed (one layout's phases) are
// one unit, their histograms merged.
func TestSeedsPairOnlyCommonDraws(t *testing.T) {
	six := []float64{5000, 5000, 5000, 5000, 5000, 5000}
	o := report.Options{Looks: 3, EvenSpending: true}
	t.Run("two samples", func(t *testing.T) {
		rep, err := report.Compare(seededResult("base", 3000, six), seededResult("head", 3150, six), o)
		if err != nil {
			t.Fatal(err)
		}
		v := verdictOf(t, rep, "path", "p50")
		if v.Kind != stats.Regression || v.Rounds != 0 {
			t.Errorf("path p50 +5%%, 6 seeds a side, two targets: %s over %d pairs, want a regression of two samples", v.Kind, v.Rounds)
		}
	})
	t.Run("common draws", func(t *testing.T) {
		base, head := seededResult("vm", 3000, six), seededResult("vm", 3150, six)
		rep, err := report.Compare(base, head, o)
		if err != nil {
			t.Fatal(err)
		}
		v := verdictOf(t, rep, "path", "p50")
		if v.Rounds != 6 || v.Kind == stats.Regression {
			t.Errorf("path p50 +5%%, 6 seeds, one target: %s over %d pairs, want paired by seed and not yet decided (2^-6)", v.Kind, v.Rounds)
		}
	})
	t.Run("phases merge", func(t *testing.T) {
		base, head := seededResult("base", 3000, six), seededResult("head", 3150, six)
		// Each seed's trial again, as a second phase of its layout: still
		// 6 units a side, not 12.
		for _, r := range []*result.Result{base, head} {
			for _, m := range r.Scenarios[0].Metrics {
				m.Trials = append(m.Trials, m.Trials...)
			}
		}
		rep, err := report.Compare(base, head, o)
		if err != nil {
			t.Fatal(err)
		}
		v := verdictOf(t, rep, "path", "p50")
		if v.BaseTrials != 6 || v.CandTrials != 6 || v.Kind != stats.Regression {
			t.Errorf("two phases of 6 layouts a side: %s over %d+%d units, want a regression over 6+6", v.Kind, v.BaseTrials, v.CandTrials)
		}
	})
}

// verdictOf is rep's first scenario's verdict of metric at percentile q.
func verdictOf(t *testing.T, rep *report.Report, metric, q string) stats.Verdict {
	t.Helper()
	for _, v := range rep.Scenarios[0].Verdicts {
		if v.Metric == metric && v.Quantile == q {
			return v
		}
	}
	t.Fatalf("no verdict of %s %s", metric, q)
	return stats.Verdict{}
}

// NuisanceBand is the largest log distance of a boot's quantile from its
// side's median, over both sides; a side of one boot adds nothing, and a
// band no wider than a bucket covers no threshold.
func TestNuisanceBand(t *testing.T) {
	if b := stats.NuisanceBand([]float64{100, 100, 100}, []float64{100, 100}); b.Spread != 0 || b.Seeds != 5 || b.Covers(0.001) {
		t.Errorf("flat: %+v, covers 0.1%%: %v", b, b.Covers(0.001))
	}
	b := stats.NuisanceBand([]float64{100, 200, 100, 100}, []float64{1000})
	if got := b.Fraction(); got < 0.999 || got > 1.001 || !b.Covers(0.5) || b.Covers(1.5) {
		t.Errorf("one boot at twice its side's median: band ±%.3f, covers 50%% %v, 150%% %v; want ±1, true, false", got, b.Covers(0.5), b.Covers(1.5))
	}
}
