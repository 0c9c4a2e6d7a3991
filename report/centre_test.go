package report

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

func TestWalshCentre(t *testing.T) {
	w := make([]float64, 0, 16)
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 2}, 1.5},
		// Walsh averages 1, 1.5, 2, 2, 2.5, 3, 50.5, 51, 51.5, 100: the
		// median (2.5+3)/2, where the mean is 26.5.
		{[]float64{1, 2, 3, 100}, 2.75},
		{[]float64{0, 0, 0, 10}, 0},
	} {
		if got := walshCentre(c.xs, w); got != c.want {
			t.Errorf("walshCentre(%v) = %g, want %g", c.xs, got, c.want)
		}
	}
	if got := walshCentre(nil, w); !math.IsNaN(got) {
		t.Errorf("walshCentre(nil) = %g, want NaN", got)
	}
}

// storedRun draws a run of n trials of metric from the pool, each trial's
// histogram scaled by shift.
func storedRun(r *rand.Rand, pool *result.Result, metric string, n int, shift float64) *result.Result {
	src := pool.Scenarios[0].Metrics[metric].Trials
	res := *pool
	sc := pool.Scenarios[0]
	m := &result.Metric{Unit: "ns"}
	for range n {
		tr := src[r.IntN(len(src))]
		tr.Round, tr.Slot = 0, 0
		if shift != 1 {
			tr.Histogram = scaled(tr.Histogram, shift)
		}
		m.Trials = append(m.Trials, tr)
	}
	sc.Metrics = map[string]*result.Metric{metric: m}
	sc.Trials = n
	res.Scenarios = []result.Scenario{sc}
	return &res
}

// TestStoredBaselineDecidesOnRealTrials: a stored baseline of 20 real
// syscall-read trials, calibrated from 8 runs of 20, against candidates of
// 20 trials drawn from the same pool. Compared by the trials' centre (the
// statistic Calibrate measures), an unchanged candidate is "no change" in
// most runs, never a regression, and a head 3T (30%) slower is caught.
func TestStoredBaselineDecidesOnRealTrials(t *testing.T) {
	pool, err := result.Load(filepath.Join("testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	const metric, runs = "syscall.read", 100
	r := rand.New(rand.NewPCG(3, 4))
	var cals []*result.Result
	for range 8 {
		cals = append(cals, storedRun(r, pool, metric, 20, 1))
	}
	cal, err := Calibrate(cals)
	if err != nil {
		t.Fatal(err)
	}
	sp := cal.Scenarios[pool.Scenarios[0].Name][metric]["p99"]
	t.Logf("calibration, 8 runs: p99 between %.4f within %.4f upper %.4f", sp.BetweenSD, sp.WithinSD, sp.UpperSD)
	count := func(c *Calibration, shift float64) map[Kind]int {
		kinds := map[Kind]int{}
		r := rand.New(rand.NewPCG(5, uint64(shift*100)))
		for range runs {
			base := storedRun(r, pool, metric, 20, 1)
			cand := storedRun(r, pool, metric, 20, shift)
			rep, err := Compare(base, cand, Options{Stored: true, Calibration: c, gatedOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rep.Scenarios[0].Verdicts {
				if v.Gated {
					kinds[v.Kind]++
				}
			}
		}
		return kinds
	}
	aa, slow := count(cal, 1), count(cal, 1.3)
	t.Logf("A/A %v, +30%% %v", aa, slow)
	if aa[Regression] > 0 {
		t.Errorf("A/A against a stored baseline: %d regressions in %d", aa[Regression], runs)
	}
	if aa[NoChange] < runs/2 {
		t.Errorf("A/A against a stored baseline: no change in %d of %d, want ≥ half", aa[NoChange], runs)
	}
	if slow[Regression] < runs*95/100 {
		t.Errorf("+30%% against a stored baseline: caught in %d of %d, want ≥ 95%%", slow[Regression], runs)
	}
}

// walshCentre's selection agrees with a sort on random samples, ties
// included.
func TestWalshCentreSelects(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 0, 64*65/2)
	for n := 1; n <= 64; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(r.NormFloat64() * 4)
		}
		var all []float64
		for i := range xs {
			for j := i; j < n; j++ {
				all = append(all, (xs[i]+xs[j])/2)
			}
		}
		slices.Sort(all)
		m := len(all)
		want := all[m/2]
		if m%2 == 0 {
			want = (all[m/2-1] + all[m/2]) / 2
		}
		if got := walshCentre(xs, w); got != want {
			t.Fatalf("n=%d: walshCentre = %g, sorted median %g", n, got, want)
		}
	}
}

func BenchmarkTrialCentre(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	for b.Loop() {
		trialCentre(xs, r, DefaultResamples)
	}
}
