package report

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

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
		cals = append(cals, statstest.FromPool(r, pool, metric, 20, 1))
	}
	cal, err := Calibrate(cals)
	if err != nil {
		t.Fatal(err)
	}
	sp := cal.Scenarios[pool.Scenarios[0].Name][metric]["p99"]
	t.Logf("calibration, 8 runs: p99 between %.4f within %.4f upper %.4f", sp.BetweenSD, sp.WithinSD, sp.UpperSD)
	count := func(c *stats.Calibration, shift float64) map[stats.Kind]int {
		kinds := map[stats.Kind]int{}
		r := rand.New(rand.NewPCG(5, uint64(shift*100)))
		for range runs {
			base := statstest.FromPool(r, pool, metric, 20, 1)
			cand := statstest.FromPool(r, pool, metric, 20, shift)
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
	if aa[stats.Regression] > 0 {
		t.Errorf("A/A against a stored baseline: %d regressions in %d", aa[stats.Regression], runs)
	}
	if aa[stats.NoChange] < runs/2 {
		t.Errorf("A/A against a stored baseline: no change in %d of %d, want ≥ half", aa[stats.NoChange], runs)
	}
	if slow[stats.Regression] < runs*95/100 {
		t.Errorf("+30%% against a stored baseline: caught in %d of %d, want ≥ 95%%", slow[stats.Regression], runs)
	}
}
