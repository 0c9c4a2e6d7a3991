package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// The simulations check the gate per gate run, not per percentile: a run
// is two scenarios, three metrics, each gated at p99 (the default gate),
// and it fails when any of the three is called a regression.

// gateSim runs Runs simulated gate runs of base and candidate measured in
// the same job, Rounds rounds each (one trial per side per round).
type gateSim struct {
	Runs       int
	Rounds     int
	Events     float64
	Noise      statstest.Noise
	Shift      map[string]float64
	Seed       uint64
	Sequential bool // look after rounds 6, 8, …, Rounds; else once at Rounds
	// Planned passes the number of looks to Sequential.Looks.
	Planned bool
	// Stored compares with a baseline from a separate run; Calibration
	// is then the spread passed (nil: none).
	Stored      bool
	Calibration *stats.Calibration
}

// gateOutcome is what one gate run ended with.
type gateOutcome struct {
	Failed     bool // a regression in the final report: exit 1
	EverFailed bool // a regression at any look, stopped or not
	Stop       Stopping
	Kinds      map[string]stats.Kind // metric → its p99 verdict at the stop
}

// gateTally sums the outcomes of a simulation.
type gateTally struct {
	Runs, Failed, EverFailed int
	Decided                  int         // runs that stopped with every test decided
	StopLooks                map[int]int // look → runs that stopped there
	Kinds                    map[string]map[stats.Kind]int
}

func (t gateTally) rate(n int) float64 { return float64(n) / float64(t.Runs) }

func (t gateTally) medianLook() int {
	seen := 0
	for k := 0; ; k++ {
		seen += t.StopLooks[k]
		if 2*seen >= t.Runs {
			return k
		}
	}
}

func (g gateSim) one(i int) gateOutcome {
	r := rand.New(rand.NewPCG(g.Seed, uint64(i)))
	events := g.Events
	if events == 0 {
		events = 5e4
	}
	// Measured in one job, interleaved, base and candidate share the
	// run's offset; a stored baseline drew its own on another day.
	baseOffset := g.Noise.Run * r.NormFloat64()
	candOffset := baseOffset
	if g.Stored {
		candOffset = g.Noise.Run * r.NormFloat64()
	}
	base := statstest.DrawRun(r, g.Noise, g.Rounds, events, nil, baseOffset)
	cand := statstest.DrawRun(r, g.Noise, g.Rounds, events, g.Shift, candOffset)
	opt := Options{gatedOnly: true, Stored: g.Stored, Calibration: g.Calibration}
	if g.Planned {
		opt.Looks = (stats.Sequential{}).LookAt(g.Rounds)
	}
	var out gateOutcome
	judge := func(rounds, look int) *Report {
		opt.Look = look
		rep, err := Compare(base.Result("base", rounds), cand.Result("cand", rounds), opt)
		if err != nil {
			panic(err)
		}
		if rep.Failed(false) {
			out.EverFailed = true
		}
		return rep
	}
	var rep *Report
	if !g.Sequential {
		rep = judge(g.Rounds, 0)
		out.Stop = rep.Stopping(true)
	} else {
		var seq stats.Sequential
		for round := 1; round <= g.Rounds; round++ {
			look := seq.LookAt(round)
			if look == 0 {
				continue
			}
			rep = judge(round, look)
			// The budget is spent when the next look would pass Rounds.
			if out.Stop = rep.Stopping(round+stats.DefaultLookEvery > g.Rounds); out.Stop.Stop {
				break
			}
		}
	}
	out.Failed = rep.Failed(false)
	out.Kinds = map[string]stats.Kind{}
	for _, s := range rep.Scenarios {
		for _, v := range s.Verdicts {
			if v.Gated {
				out.Kinds[v.Metric] = v.Kind
			}
		}
	}
	return out
}

func (g gateSim) run() gateTally {
	t := gateTally{Runs: g.Runs, StopLooks: map[int]int{}, Kinds: map[string]map[stats.Kind]int{}}
	for _, m := range statstest.SimMetrics {
		t.Kinds[m.Name] = map[stats.Kind]int{}
	}
	var mu sync.Mutex
	parallel(g.Runs, func(i int) {
		o := g.one(i)
		mu.Lock()
		defer mu.Unlock()
		if o.Failed {
			t.Failed++
		}
		if o.EverFailed {
			t.EverFailed++
		}
		if o.Stop.Reason == StopDecided {
			t.Decided++
		}
		t.StopLooks[o.Stop.Look]++
		for m, k := range o.Kinds {
			t.Kinds[m][k]++
		}
	})
	return t
}

func simRuns(t testing.TB, n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

func TestSimulationNoiseIsMeasured(t *testing.T) {
	if cv := statstest.Measured.CV(); math.Abs(cv-0.15) > 0.01 {
		t.Errorf("between-process CV %.3f, want the measured 0.15", cv)
	}
}

// A/A, same job, one look at 20 trials per side: at most 1% of gate runs
// may exit 1.
func TestSimulationFalseAlarms(t *testing.T) {
	o := gateSim{Runs: simRuns(t, 600), Rounds: 20, Noise: statstest.Measured, Seed: 1}.run()
	t.Logf("A/A, 20 trials/side, one look: %d of %d gate runs had a regression (%.2f%%); %d decided", o.Failed, o.Runs, 100*o.rate(o.Failed), o.Decided)
	if o.rate(o.Failed) > 0.01 {
		t.Errorf("false alarms in %.2f%% of gate runs, want ≤ 1%%", 100*o.rate(o.Failed))
	}
}

// A/A with looks after rounds 6, 8, …, 20, open-ended and with the 8
// looks planned: the alpha spent over all looks still holds the false
// alarms per gate run to 1%. What is counted is a regression at any of
// the 8 looks, which bounds exit 1 whatever the run stops at; the two
// spending rules judge the same comparisons.
func TestSimulationSequentialFalseAlarms(t *testing.T) {
	runs := simRuns(t, 600)
	var mu sync.Mutex
	var open, planned int
	parallel(runs, func(i int) {
		r := rand.New(rand.NewPCG(2, uint64(i)))
		base := statstest.DrawRun(r, statstest.Measured, 20, 5e4, nil, 0)
		cand := statstest.DrawRun(r, statstest.Measured, 20, 5e4, nil, 0)
		var seq stats.Sequential
		var o, p bool
		for round := 1; round <= 20; round++ {
			look := seq.LookAt(round)
			if look == 0 {
				continue
			}
			rep, err := Compare(base.Result("base", round), cand.Result("cand", round), Options{gatedOnly: true, Look: look})
			if err != nil {
				panic(err)
			}
			o = o || rep.Failed(false)
			judgeReports([]*Report{rep}, Options{Look: look, Looks: 8})
			p = p || rep.Failed(false)
		}
		mu.Lock()
		defer mu.Unlock()
		if o {
			open++
		}
		if p {
			planned++
		}
	})
	t.Logf("A/A, looks after rounds 6, 8, …, 20: a regression at some look in %d of %d gate runs open-ended (%.2f%%), %d with 8 looks planned (%.2f%%)",
		open, runs, 100*float64(open)/float64(runs), planned, 100*float64(planned)/float64(runs))
	if float64(open) > 0.01*float64(runs) || float64(planned) > 0.01*float64(runs) {
		t.Errorf("false alarms in %d (open-ended) and %d (planned) of %d gate runs, want ≤ 1%% each", open, planned, runs)
	}
}

// parallel calls f(0) … f(n-1) on every CPU.
func parallel(n int, f func(int)) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				f(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// With the looks planned, more alpha is left for the last looks, where
// the trials are: under the measured noise +50% of one metric is caught
// far more often than by the open-ended spending (about 60%).
func TestSimulationPlannedLooksKeepPower(t *testing.T) {
	o := gateSim{Runs: simRuns(t, 100), Rounds: 20, Noise: statstest.Measured, Seed: 10, Sequential: true, Planned: true, Shift: map[string]float64{"syscall.read": 0.5}}.run()
	power := o.rate(o.Kinds["syscall.read"][stats.Regression])
	t.Logf("+50%% syscall.read, 8 looks planned: regression in %.1f%% of gate runs, stops per look %v", 100*power, o.StopLooks)
	if power < 0.80 {
		t.Errorf("power %.1f%%, want ≥ 80%%", 100*power)
	}
}

// A large shift stops a sequential run early, a regression. With trials
// as spread as inside one process, +50% of one metric stops at the first
// look. Under the measured between-process noise the merged p99 of 6
// trials moves by about 15% (its standard error), so +50% is only about
// 2.7 standard errors there, and no valid test at the first look's level
// can call it; +100% must still stop by the second look in most runs.
func TestSimulationLargeShiftStopsEarly(t *testing.T) {
	for _, c := range []struct {
		name                string
		noise               statstest.Noise
		shift               float64
		byLook              int
		minCaught, minEarly float64
	}{
		{"within-run noise, +50%", statstest.Noise{Within: 0.023}, 0.5, 1, 0.99, 0.95},
		{"measured noise, +100%", statstest.Measured, 1.0, 2, 0.95, 0.50},
	} {
		o := gateSim{Runs: simRuns(t, 100), Rounds: 20, Noise: c.noise, Seed: 3, Sequential: true, Shift: map[string]float64{"syscall.read": c.shift}}.run()
		early := 0
		for k := 1; k <= c.byLook; k++ {
			early += o.StopLooks[k]
		}
		caught := o.Kinds["syscall.read"][stats.Regression]
		t.Logf("%s: regression in %d of %d gate runs, stopped by look %d in %d; stops per look %v", c.name, caught, o.Runs, c.byLook, early, o.StopLooks)
		if o.rate(caught) < c.minCaught {
			t.Errorf("%s: regression in %.1f%% of gate runs, want ≥ %.0f%%", c.name, 100*o.rate(caught), 100*c.minCaught)
		}
		if o.rate(early) < c.minEarly {
			t.Errorf("%s: stopped by look %d in %.1f%% of gate runs, want ≥ %.0f%%", c.name, c.byLook, 100*o.rate(early), 100*c.minEarly)
		}
	}
}

// Power at 20 trials per side, one look, for a shift of one metric's
// latencies under the measured noise. The standard error of log p99 is
// about 0.08 there, so +30% is 3.3 standard errors against a critical
// value of 3.2: the floors are what that allows, well short of the 95%
// the issue asks for a real slowdown within the budget.
func TestSimulationPower(t *testing.T) {
	var last float64
	for _, c := range []struct {
		shift float64
		min   float64
	}{{0.2, 0.10}, {0.3, 0.45}} {
		o := gateSim{Runs: simRuns(t, 200), Rounds: 20, Noise: statstest.Measured, Seed: 4, Shift: map[string]float64{"syscall.read": c.shift}}.run()
		power := o.rate(o.Kinds["syscall.read"][stats.Regression])
		t.Logf("+%.0f%% syscall.read, 20 trials/side, one look: regression in %.1f%% of gate runs", 100*c.shift, 100*power)
		if power < c.min || power <= last {
			t.Errorf("+%.0f%%: power %.1f%%, want ≥ %.0f%% and above the smaller shift's %.1f%%", 100*c.shift, 100*power, 100*c.min, 100*last)
		}
		last = power
	}
}

// BenchmarkSimulationGrid prints per gate run the false-alarm rate, the
// power and the looks to a decision over a grid of noise and shifts (a
// few minutes):
//
//	go test ./report -run '^$' -bench SimulationGrid -benchtime 1x -v
func BenchmarkSimulationGrid(b *testing.B) {
	noises := []struct {
		name string
		n    statstest.Noise
	}{
		{"measured (15% CV, 17.5% slow)", statstest.Measured},
		{"clusters even (18% CV)", statstest.Noise{SlowShare: 0.5, SlowRatio: 1.43, Within: 0.023}},
		{"within-run only (2.3%)", statstest.Noise{Within: 0.023}},
	}
	modes := []struct {
		name         string
		seq, planned bool
	}{{"one look at 20      ", false, false}, {"looks 6..20 open    ", true, false}, {"looks 6..20 planned ", true, true}}
	for _, nz := range noises {
		for _, md := range modes {
			for _, shift := range []float64{0, 0.1, 0.2, 0.3, 0.5} {
				runs := 500
				if shift == 0 {
					runs = 2000 // a false-alarm rate near 1% needs the runs
				}
				o := gateSim{Runs: runs, Rounds: 20, Noise: nz.n, Seed: 5, Sequential: md.seq, Planned: md.planned, Shift: map[string]float64{"syscall.read": shift}}.run()
				mode := md.name
				b.Logf("%-30s %s shift %+3.0f%%: exit 1 %5.1f%% (any look %5.1f%%)  syscall.read p99 reg %5.1f%% no-change %5.1f%%  decided %5.1f%%  median stop look %d",
					nz.name, mode, 100*shift, 100*o.rate(o.Failed), 100*o.rate(o.EverFailed),
					100*o.rate(o.Kinds["syscall.read"][stats.Regression]), 100*o.rate(o.Kinds["syscall.read"][stats.NoChange]),
					100*o.rate(o.Decided), o.medianLook())
			}
		}
	}
	storedGrid(b)
}

func TestSimulationStoredBaseline(t *testing.T) {
	storedCheck(t, simRuns(t, 300))
}

// storedNoise adds a 5% run-level offset to the measured noise: what a
// baseline stored from another day carries that same-job trials do not.
var storedNoise = func() statstest.Noise { n := statstest.Measured; n.Run = 0.05; return n }()

// calibrationFrom draws k separate runs and calibrates from them.
func calibrationFrom(t testing.TB, n statstest.Noise, k, rounds int, seed uint64) *stats.Calibration {
	r := rand.New(rand.NewPCG(seed, 1<<40))
	var runs []*result.Result
	for range k {
		runs = append(runs, statstest.DrawRun(r, n, rounds, 5e4, nil, n.Run*r.NormFloat64()).Result("host", rounds))
	}
	c, err := Calibrate(runs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A stored baseline with a run-level offset: with a calibration from 10
// runs the A/A false alarms per gate run stay at 1%; without one they do
// not, which is why the report warns.
func storedCheck(t testing.TB, runs int) {
	cal := calibrationFrom(t, storedNoise, 10, 20, 6)
	sp := cal.Scenarios["syscall-read"]["syscall.read"]["p99"]
	t.Logf("calibration from 10 runs, 5%% run offset: syscall.read p99 between %.3f within %.3f excess %.3f upper %.3f",
		sp.BetweenSD, sp.WithinSD, sp.ExcessSD, sp.UpperSD)
	with := gateSim{Runs: runs, Rounds: 20, Noise: storedNoise, Seed: 7, Stored: true, Calibration: cal}.run()
	without := gateSim{Runs: runs, Rounds: 20, Noise: storedNoise, Seed: 7, Stored: true}.run()
	t.Logf("A/A against a stored baseline, 5%% run offset: exit 1 in %.2f%% with calibration, %.2f%% without", 100*with.rate(with.Failed), 100*without.rate(without.Failed))
	if with.rate(with.Failed) > 0.01 {
		t.Errorf("calibrated stored A/A: false alarms in %.2f%% of gate runs, want ≤ 1%%", 100*with.rate(with.Failed))
	}
	if without.Failed <= with.Failed {
		t.Errorf("the calibration changed nothing: %d false alarms without, %d with", without.Failed, with.Failed)
	}
}

func storedGrid(b *testing.B) {
	for _, k := range []int{3, 5, 10, 20} {
		cal := calibrationFrom(b, storedNoise, k, 20, uint64(100+k))
		sp := cal.Scenarios["syscall-read"]["syscall.read"]["p99"]
		for _, shift := range []float64{0, 0.3} {
			runs := 500
			if shift == 0 {
				runs = 1000
			}
			o := gateSim{Runs: runs, Rounds: 20, Noise: storedNoise, Seed: 8, Stored: true, Calibration: cal, Shift: map[string]float64{"syscall.read": shift}}.run()
			b.Logf("stored baseline, 5%% run offset, calibrated from %2d runs (upper sd %.3f): shift %+3.0f%%: exit 1 %5.1f%%  syscall.read p99 reg %5.1f%%",
				k, sp.UpperSD, 100*shift, 100*o.rate(o.Failed), 100*o.rate(o.Kinds["syscall.read"][stats.Regression]))
		}
	}
	o := gateSim{Runs: 1000, Rounds: 20, Noise: storedNoise, Seed: 8, Stored: true}.run()
	b.Log(fmt.Sprintf("stored baseline, 5%% run offset, no calibration: A/A exit 1 %5.1f%%", 100*o.rate(o.Failed)))
}
