package report

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// simGate is one same-job gate drawn from real recorded trials: each round
// a base and a head trial drawn at random from the pool (the head's made
// shift× slower), looks at PlanLooks(rounds) spending the level evenly,
// stopping as the gate does. It returns the gated verdict's kind and the
// rounds run.
func simGate(t *testing.T, r *rand.Rand, pool *result.Result, metric string, rounds int, shift float64) (stats.Kind, int) {
	t.Helper()
	src := pool.Scenarios[0].Metrics[metric].Trials
	mk := func() (*result.Result, *result.Metric) {
		res := *pool
		sc := pool.Scenarios[0]
		m := &result.Metric{Unit: "ns"}
		sc.Metrics = map[string]*result.Metric{metric: m}
		sc.Trials = 0
		res.Scenarios = []result.Scenario{sc}
		return &res, m
	}
	base, bm := mk()
	cand, cm := mk()
	looks := stats.PlanLooks(rounds)
	for round := 1; round <= rounds; round++ {
		bt, ct := src[r.IntN(len(src))], src[r.IntN(len(src))]
		bt.Round, ct.Round = round, round
		if shift != 1 {
			ct.Histogram = statstest.Scaled(ct.Histogram, shift)
		}
		bm.Trials, cm.Trials = append(bm.Trials, bt), append(cm.Trials, ct)
		base.Scenarios[0].Trials, cand.Scenarios[0].Trials = round, round
		k := slices.Index(looks, round) + 1
		if k == 0 {
			continue
		}
		rep, err := Compare(base, cand, Options{Look: k, Looks: len(looks), EvenSpending: true})
		if err != nil {
			t.Fatal(err)
		}
		if st := rep.Stopping(k == len(looks)); st.Stop {
			for _, v := range rep.Scenarios[0].Verdicts {
				if v.Gated {
					return v.Kind, round
				}
			}
		}
	}
	t.Fatal("no verdict")
	return "", 0
}

// TestPairedGateOnRealTrials: the paired gate's size, decisiveness and
// power, on real per-trial histograms of syscall-read recorded on this
// kind of machine (80 trials, each a separate worker process), resampled
// into gates of the default budget's 105 rounds. The draws are seeded, so
// the counts are the same every run; BENCHMARKS.md has the larger run.
func TestPairedGateOnRealTrials(t *testing.T) {
	pool, err := result.Load(filepath.Join("testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	for _, c := range []struct {
		name  string
		shift float64
		check func(t *testing.T, kinds map[stats.Kind]int, rounds []int)
	}{
		{"A/A", 1, func(t *testing.T, kinds map[stats.Kind]int, rounds []int) {
			if kinds[stats.Regression] > runs/50 {
				t.Errorf("%d of %d A/A gates called a regression, want at most 2%%", kinds[stats.Regression], runs)
			}
			if kinds[stats.NoChange] < runs*9/10 {
				t.Errorf("%d of %d A/A gates decided no change, want ≥ 90%%", kinds[stats.NoChange], runs)
			}
		}},
		{"+20%", 1.2, func(t *testing.T, kinds map[stats.Kind]int, rounds []int) {
			if kinds[stats.Regression] < runs*95/100 {
				t.Errorf("%d of %d gates caught a +20%% head, want ≥ 95%%", kinds[stats.Regression], runs)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(c.shift*1000)))
			kinds := map[stats.Kind]int{}
			var rounds []int
			for range runs {
				k, n := simGate(t, r, pool, "syscall.read", 105, c.shift)
				kinds[k]++
				rounds = append(rounds, n)
			}
			slices.Sort(rounds)
			t.Logf("%s: %v, median %d rounds", c.name, kinds, rounds[len(rounds)/2])
			c.check(t, kinds, rounds)
		})
	}
}

// BenchmarkPairedGateSim is TestPairedGateOnRealTrials at any size, on any
// recorded pool of trials (a Result of one scenario; its first metric
// unless TAILGATE_SIM_METRIC names one):
//
//	TAILGATE_SIM_POOL=testdata/trials-syscall-read.json TAILGATE_SIM_RUNS=2000 \
//	TAILGATE_SIM_SHIFTS='1 1.1 1.15 1.2' TAILGATE_SIM_ROUNDS=105 \
//	go test ./report/ -run '^$' -bench PairedGateSim -benchtime 1x
func BenchmarkPairedGateSim(b *testing.B) {
	path := os.Getenv("TAILGATE_SIM_POOL")
	if path == "" {
		path = filepath.Join("testdata", "trials-syscall-read.json")
	}
	pool, err := result.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	metric := os.Getenv("TAILGATE_SIM_METRIC")
	if metric == "" {
		for name := range pool.Scenarios[0].Metrics {
			metric = name
		}
	}
	runs, _ := strconv.Atoi(cmp.Or(os.Getenv("TAILGATE_SIM_RUNS"), "1000"))
	rounds, _ := strconv.Atoi(cmp.Or(os.Getenv("TAILGATE_SIM_ROUNDS"), "105"))
	t := &testing.T{}
	for range b.N {
		for _, f := range strings.Fields(cmp.Or(os.Getenv("TAILGATE_SIM_SHIFTS"), "1 1.2")) {
			shift, _ := strconv.ParseFloat(f, 64)
			r := rand.New(rand.NewPCG(7, uint64(shift*1000)))
			kinds := map[stats.Kind]int{}
			var ns []int
			for range runs {
				k, n := simGate(t, r, pool, metric, rounds, shift)
				kinds[k]++
				ns = append(ns, n)
			}
			slices.Sort(ns)
			b.Logf("%s %s ×%.2f, %d runs of ≤ %d rounds: %d regression, %d no change, %d inconclusive, %d improvement; median %d rounds",
				filepath.Base(path), metric, shift, runs, rounds, kinds[stats.Regression], kinds[stats.NoChange], kinds[stats.Inconclusive], kinds[stats.Improvement], ns[len(ns)/2])
		}
	}
}
