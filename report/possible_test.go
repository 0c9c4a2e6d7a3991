package report

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/judgetest"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// TestJudgeIsPossible checks judgetest.Possible, the judge's rule read
// backwards that the renderers' fixtures and goldens are held to, against
// the judge itself: every verdict Compare gives on simulated runs (same
// job and stored, equal and shifted each way, few and many trials, p50
// to p99.9 gated) passes it. Each kind must turn up, so that the rule
// was tried on all of them.
func TestJudgeIsPossible(t *testing.T) {
	var gates []stats.Threshold
	for _, g := range []string{"p50=5%", "p90=10%", "p99=10%", "p99.9=25%"} {
		th, err := stats.ParseThreshold(g)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, th)
	}
	type config struct {
		rounds int
		shift  float64
		stored bool
	}
	var configs []config
	for _, rounds := range []int{3, 8, 20} {
		for _, shift := range []float64{-0.4, -0.1, 0, 0.05, 0.12, 0.4} {
			for _, stored := range []bool{false, true} {
				configs = append(configs, config{rounds, shift, stored})
			}
		}
	}
	const runs = 4
	var mu sync.Mutex
	kinds := map[stats.Kind]int{}
	parallel(len(configs)*runs, func(i int) {
		c := configs[i/runs]
		r := rand.New(rand.NewPCG(47, uint64(i)))
		shift := map[string]float64{}
		for _, m := range statstest.SimMetrics {
			shift[m.Name] = c.shift
		}
		base := statstest.DrawRun(r, statstest.Measured, c.rounds, 5e4, nil, 0)
		offset := 0.0
		if c.stored {
			offset = statstest.Measured.Run * r.NormFloat64()
		}
		cand := statstest.DrawRun(r, statstest.Measured, c.rounds, 5e4, shift, offset)
		rep, err := Compare(base.Result("base", c.rounds), cand.Result("cand", c.rounds), Options{Stored: c.stored, Thresholds: gates, Resamples: 200})
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, s := range rep.Scenarios {
			for _, v := range s.Verdicts {
				kinds[v.Kind]++
				if err := judgetest.Possible(v); err != nil {
					t.Errorf("%d rounds, shift %+g, stored %v: %s %s: the judge said %s, and Possible: %v", c.rounds, c.shift, c.stored, v.Metric, v.Quantile, v.Kind, err)
				}
			}
		}
	})
	t.Logf("verdicts checked: %v", kinds)
	for _, k := range []stats.Kind{stats.Regression, stats.Improvement, stats.NoChange, stats.Inconclusive, stats.NotGated} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the judge's verdicts: the rule was not tried on it", k)
		}
	}
}
