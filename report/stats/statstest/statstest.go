// Package statstest draws trials for the tests of the statistics
// (report/stats) and of what is built on them: synthetic lognormal
// histograms, runs of them under the noise measured between worker
// processes, and runs drawn from a pool of recorded trials.
package statstest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats/draw"
)

// Synthetic describes a latency distribution for tests: lognormal around
// Median (ns) with shape Sigma, every value multiplied by Scale.
type Synthetic struct {
	Median float64
	Sigma  float64
	Scale  float64
}

// Trial draws one trial of about n events, binned straight into the
// histogram: each bucket's count is Poisson with the bucket's expected
// share of n, which is how independent events fall into buckets.
func (s Synthetic) Trial(r *rand.Rand, n float64) *hist.Histogram {
	h := hist.New()
	mu := math.Log(s.Median * s.Scale)
	cdf := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 0.5 * math.Erfc(-(math.Log(x)-mu)/(s.Sigma*math.Sqrt2))
	}
	lo := math.Exp(mu - 7*s.Sigma)
	hi := math.Exp(mu + 7*s.Sigma)
	first := hist.Bucket(uint64(lo))
	b, _ := hist.Bounds(first)
	below := cdf(float64(b))
	for i := first; i <= hist.Bucket(uint64(hi)); i++ {
		// Buckets are contiguous: one's upper edge is the next one's lower.
		b, w := hist.Bounds(i)
		upto := cdf(float64(b + w))
		h.AddBucket(i, draw.Poisson(r, n*(upto-below)))
		below = upto
	}
	return h
}

// Trials draws k trials whose scales vary by spread (a fraction, as the
// standard deviation of a lognormal factor) around s.Scale.
func (s Synthetic) Trials(r *rand.Rand, k int, n, spread float64) []*hist.Histogram {
	out := make([]*hist.Histogram, k)
	for i := range out {
		t := s
		t.Scale = s.Scale * math.Exp(spread*r.NormFloat64())
		out[i] = t.Trial(r, n)
	}
	return out
}

// Result is a Result of one scenario (timer-1ms), two metrics
// (timer.lateness drawn from s, sched.runq at a quarter of its median),
// trials drawn with the given seed.
func Result(target, kernel string, s Synthetic, trials int, seed uint64) *result.Result {
	r := rand.New(rand.NewPCG(seed, 7))
	sc := result.Scenario{Name: "timer-1ms", Params: "p1", Trials: trials, Metrics: map[string]*result.Metric{}}
	for _, name := range []string{"timer.lateness", "sched.runq"} {
		m := &result.Metric{Unit: "ns"}
		ms := s
		if name == "sched.runq" {
			ms.Median /= 4
		}
		for _, h := range ms.Trials(r, trials, 20000, 0.02) {
			m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h)})
		}
		sc.Metrics[name] = m
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(int64(seed), 0),
		Target:      result.Target{Name: target, Kind: "host"},
		Environment: result.Environment{KernelRelease: kernel, CPUModel: "test cpu", CPUs: 2},
		Scenarios:   []result.Scenario{sc},
	}
}

// Noise is how a trial's latencies vary, as a factor on every latency of
// the trial: each trial is a fresh process, which lands in one of two
// clusters (measured on this machine: syscall.read p50 ~200 ns or ~286
// ns, a ratio of 1.43, 15% CV between processes), and varies a little
// more within its cluster (2.3% between trials inside one process). Run
// is the sd of an offset every trial of one run shares: what separates a
// stored baseline from today's run beyond the trials' own spread.
type Noise struct {
	SlowShare float64 // chance a process lands in the slow cluster
	SlowRatio float64 // slow cluster / fast cluster
	Within    float64 // sd of the log scale inside a cluster
	Run       float64 // sd of the log offset of a whole run
}

// Measured is the noise measured here; its between-process CV at p50 is
// 15%.
var Measured = Noise{SlowShare: 0.175, SlowRatio: 1.43, Within: 0.023}

// CV is the coefficient of variation of a trial's scale.
func (n Noise) CV() float64 {
	mean := 1 + n.SlowShare*(n.SlowRatio-1)
	sd := (n.SlowRatio - 1) * math.Sqrt(n.SlowShare*(1-n.SlowShare))
	return math.Hypot(sd/mean, n.Within)
}

// SimMetric is one metric of a simulated gate run.
type SimMetric struct {
	Scenario, Name string
	Shape          Synthetic
}

// SimMetrics are a simulated gate run's three tests over two scenarios.
// A process's cluster moves every metric of its scenario together.
var SimMetrics = []SimMetric{
	{"syscall-read", "syscall.read", Synthetic{Median: 250, Sigma: 0.3, Scale: 1}},
	{"syscall-read", "sched.wakeup", Synthetic{Median: 4000, Sigma: 0.5, Scale: 1}},
	{"timer-1ms", "timer.lateness", Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}},
}

// Run is one side's simulated run: per metric, its trials in round order.
type Run map[string][]*hist.Histogram

// DrawRun draws rounds trials of every metric of SimMetrics, every latency
// multiplied by exp(offset) and those of the metrics shift names by 1 +
// their shift.
func DrawRun(r *rand.Rand, n Noise, rounds int, events float64, shift map[string]float64, offset float64) Run {
	run := Run{}
	for range rounds {
		cluster := map[string]float64{}
		for _, m := range SimMetrics {
			c, ok := cluster[m.Scenario]
			if !ok {
				if r.Float64() < n.SlowShare {
					c = math.Log(n.SlowRatio)
				}
				cluster[m.Scenario] = c
			}
			s := m.Shape
			s.Scale *= (1 + shift[m.Name]) * math.Exp(offset+c+n.Within*r.NormFloat64())
			run[m.Name] = append(run[m.Name], s.Trial(r, events))
		}
	}
	return run
}

// Result is the run's first rounds trials as a Result.
func (run Run) Result(target string, rounds int) *result.Result {
	res := &result.Result{
		Schema:      result.SchemaVersion,
		Target:      result.Target{Name: target, Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0", CPUModel: "sim", CPUs: 2},
	}
	for _, m := range SimMetrics {
		s := res.Find(m.Scenario)
		if s == nil {
			res.Scenarios = append(res.Scenarios, result.Scenario{Name: m.Scenario, Params: "p", Trials: rounds, Metrics: map[string]*result.Metric{}})
			s = &res.Scenarios[len(res.Scenarios)-1]
		}
		met := &result.Metric{Unit: "ns"}
		for _, h := range run[m.Name][:rounds] {
			met.Trials = append(met.Trials, result.Trial{Histogram: h})
		}
		s.Metrics[m.Name] = met
	}
	return res
}

// FromPool draws a run of n trials of metric from the pool (a Result of
// one scenario of recorded trials), each trial's histogram scaled by
// shift.
func FromPool(r *rand.Rand, pool *result.Result, metric string, n int, shift float64) *result.Result {
	src := pool.Scenarios[0].Metrics[metric].Trials
	res := *pool
	sc := pool.Scenarios[0]
	m := &result.Metric{Unit: "ns"}
	for range n {
		tr := src[r.IntN(len(src))]
		tr.Round, tr.Slot = 0, 0
		if shift != 1 {
			tr.Histogram = Scaled(tr.Histogram, shift)
		}
		m.Trials = append(m.Trials, tr)
	}
	sc.Metrics = map[string]*result.Metric{metric: m}
	sc.Trials = n
	res.Scenarios = []result.Scenario{sc}
	return &res
}

// Scaled returns h with every value multiplied by s: a real trial made
// uniformly slower.
func Scaled(h *hist.Histogram, s float64) *hist.Histogram {
	out := hist.New()
	for i, c := range h.Counts() {
		if c != 0 {
			out.RecordN(uint64(hist.Mid(i)*s), c)
		}
	}
	return out
}
