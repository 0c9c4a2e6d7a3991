package report

import (
	"cmp"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// bruteSignFlip enumerates every sign vector: the definition signFlipP
// computes by convolution.
func bruteSignFlip(d []float64) (up, down float64) {
	var abs []float64
	for _, x := range d {
		if x != 0 {
			abs = append(abs, math.Abs(x))
		}
	}
	n := len(abs)
	rank := func(a float64) float64 {
		lo, eq := 0, 0
		for _, b := range abs {
			if b < a {
				lo++
			} else if b == a {
				eq++
			}
		}
		return float64(lo) + float64(eq+1)/2
	}
	stat := func(signs uint) float64 {
		s := 0.0
		for i, a := range abs {
			if signs&(1<<i) != 0 {
				s += rank(a)
			}
		}
		return s
	}
	var obs uint
	i := 0
	for _, x := range d {
		if x > 0 {
			obs |= 1 << i
		}
		if x != 0 {
			i++
		}
	}
	w := stat(obs)
	total := 1 << n
	for v := range total {
		s := stat(uint(v))
		if s >= w-1e-9 {
			up++
		}
		if s <= w+1e-9 {
			down++
		}
	}
	return up / float64(total), down / float64(total)
}

func TestSignFlipPExact(t *testing.T) {
	for _, c := range []struct {
		name string
		d    []float64
	}{
		{"all up", []float64{0.1, 0.2, 0.3, 0.4, 0.5}},
		{"mixed", []float64{0.1, -0.2, 0.3, -0.05, 0.5, 0.25, -0.4}},
		{"ties and zeros", []float64{0.1, -0.1, 0.1, 0, 0.2, -0.2, 0, 0.1, 0.3}},
		{"one", []float64{-0.3}},
		{"only zeros", []float64{0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up, down := signFlipP(c.d)
			wu, wd := bruteSignFlip(c.d)
			if math.Abs(up-wu) > 1e-12 || math.Abs(down-wd) > 1e-12 {
				t.Errorf("signFlipP = %g, %g; enumeration %g, %g", up, down, wu, wd)
			}
		})
	}
}

// The Walsh-average bounds are the signed-rank test inverted: without
// ties, a shift δ below the lower bound at level a is exactly one the test
// of d−δ rejects at a.
func TestWalshBoundsInvertTheTest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{8, 12, 20} {
		d := make([]float64, n)
		for i := range d {
			d[i] = 0.1 + 0.15*r.NormFloat64()
		}
		p := newPaired(d)
		for _, a := range []float64{0.05, 0.01, 0.001} {
			lo, hi := p.lower(a), p.upper(a)
			for _, delta := range []float64{-0.3, -0.1, 0, 0.05, 0.1, 0.15, 0.3} {
				shifted := make([]float64, n)
				for i := range d {
					shifted[i] = d[i] - delta
				}
				up, down := signFlipP(shifted)
				if (up <= a) != (delta < lo) {
					t.Errorf("n=%d a=%g δ=%g: p up %g, lower bound %g", n, a, delta, up, lo)
				}
				if (down <= a) != (delta > hi) {
					t.Errorf("n=%d a=%g δ=%g: p down %g, upper bound %g", n, a, delta, down, hi)
				}
			}
		}
	}
}

// A signed-rank test over n rounds cannot go below 2^-n: the bounds say
// so rather than claim a level they cannot hold.
func TestPairedTooFewRounds(t *testing.T) {
	p := newPaired([]float64{0.5, 0.6, 0.7, 0.8, 0.9})
	if lo := p.lower(0.01); !math.IsInf(lo, -1) {
		t.Errorf("5 rounds at 1%%: lower bound %g, want -Inf (2^-5 > 1%%)", lo)
	}
	if got := minRoundsFor(0.01 / 11); got != 11 {
		t.Errorf("minRoundsFor(1%%/11) = %d, want 11", got)
	}
}

// scaled returns h with every value multiplied by s: a real trial made
// uniformly slower.
func scaled(h *hist.Histogram, s float64) *hist.Histogram {
	out := hist.New()
	for i, c := range h.Counts() {
		if c != 0 {
			out.RecordN(uint64(hist.Mid(i)*s), c)
		}
	}
	return out
}

// simGate is one same-job gate drawn from real recorded trials: each round
// a base and a head trial drawn at random from the pool (the head's made
// shift× slower), looks at PlanLooks(rounds) spending the level evenly,
// stopping as the gate does. It returns the gated verdict's kind and the
// rounds run.
func simGate(t *testing.T, r *rand.Rand, pool *result.Result, metric string, rounds int, shift float64) (Kind, int) {
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
	looks := PlanLooks(rounds)
	for round := 1; round <= rounds; round++ {
		bt, ct := src[r.IntN(len(src))], src[r.IntN(len(src))]
		bt.Round, ct.Round = round, round
		if shift != 1 {
			ct.Histogram = scaled(ct.Histogram, shift)
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
		check func(t *testing.T, kinds map[Kind]int, rounds []int)
	}{
		{"A/A", 1, func(t *testing.T, kinds map[Kind]int, rounds []int) {
			if kinds[Regression] > runs/50 {
				t.Errorf("%d of %d A/A gates called a regression, want at most 2%%", kinds[Regression], runs)
			}
			if kinds[NoChange] < runs*9/10 {
				t.Errorf("%d of %d A/A gates decided no change, want ≥ 90%%", kinds[NoChange], runs)
			}
		}},
		{"+20%", 1.2, func(t *testing.T, kinds map[Kind]int, rounds []int) {
			if kinds[Regression] < runs*95/100 {
				t.Errorf("%d of %d gates caught a +20%% head, want ≥ 95%%", kinds[Regression], runs)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(c.shift*1000)))
			kinds := map[Kind]int{}
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
			kinds := map[Kind]int{}
			var ns []int
			for range runs {
				k, n := simGate(t, r, pool, metric, rounds, shift)
				kinds[k]++
				ns = append(ns, n)
			}
			slices.Sort(ns)
			b.Logf("%s %s ×%.2f, %d runs of ≤ %d rounds: %d regression, %d no change, %d inconclusive, %d improvement; median %d rounds",
				filepath.Base(path), metric, shift, runs, rounds, kinds[Regression], kinds[NoChange], kinds[Inconclusive], kinds[Improvement], ns[len(ns)/2])
		}
	}
}
