package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// stepTarget is a target whose trials step as the runner's do (attach,
// warmup, trial, finished) and measure a gated metric and 40 others, as
// tcp-rr-small does: a finished trial's full detail is long.
type stepTarget struct {
	name  string
	scale float64
	rng   *rand.Rand
	runs  int
	// sleep is how long a trial takes; clock is the clock its Result
	// records ("" real).
	sleep time.Duration
	clock string
}

func (f *stepTarget) Name() string                                       { return f.name }
func (f *stepTarget) Prepare(req runner.Request) (runner.Request, error) { return req, nil }

func (f *stepTarget) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	res := &result.Result{Schema: result.SchemaVersion, Target: req.Target}
	res.Target.Clock = f.clock
	time.Sleep(f.sleep)
	f.runs++
	for i, s := range req.Scenarios {
		emit := func(e runner.Event) {
			e.Scenario, e.Index, e.Count, e.Trials = s.Name, i+1, len(req.Scenarios), 1
			req.Progress(e)
		}
		emit(runner.Event{Phase: runner.PhaseAttach})
		emit(runner.Event{Phase: runner.PhaseWarmup})
		emit(runner.Event{Phase: runner.PhaseTrial, Trial: 1})
		sr := result.Scenario{Name: s.Name, Trials: 1, Gate: scenarios.GatePolicy(s), Metrics: map[string]*result.Metric{}}
		sr.Definition, _ = json.Marshal(req.Resolve(s))
		for m := range 41 {
			name := fmt.Sprintf("irq.hard.virtio%d-reporting", m)
			h := hist.New()
			if m == 0 {
				name = "tcp.rr"
				for range 2000 {
					h.Record(uint64(20000 * f.scale * math.Exp(0.3*f.rng.NormFloat64())))
				}
			}
			sr.Metrics[name] = &result.Metric{Unit: "ns", Trials: []result.Trial{{Histogram: h, Summary: result.Summarize(h), Ops: 5182, Duration: 0.2, PID: f.runs}}}
		}
		emit(runner.Event{Phase: runner.PhaseTrial, Trial: 1, Measured: runner.Measure(&sr)})
		res.Scenarios = append(res.Scenarios, sr)
	}
	return res, nil
}

// simulatedGate gates two stepTargets in 60 rounds, progress shown as
// mode shows it in stderr, and returns stderr and the rounds and looks.
func simulatedGate(t *testing.T, mode progress.Mode) (stderr string, rounds, looks int) {
	t.Helper()
	var log bytes.Buffer
	targets := []Target{
		&stepTarget{name: "base", scale: 1, rng: rand.New(rand.NewPCG(1, 2))},
		// Near the threshold: several looks go by undecided.
		&stepTarget{name: "head", scale: 1.1, rng: rand.New(rand.NewPCG(3, 4))},
	}
	sp := Spec{Scenarios: []*scenarios.Scenario{{Name: "tcp-rr-small", Trials: 1, Duration: time.Second,
		Gate: result.GatePolicy{"tcp.rr": {"p99": 0.1}}}}}
	g := PairGate{RoundsOptions: RoundsOptions{Log: &log, Compare: report0(), Progress: mode}, Budget: time.Minute, Rounds: 60, Seed: 1}
	m, err := g.Gate(context.Background(), targets, sp)
	if err != nil {
		t.Fatal(err)
	}
	return log.String(), m.Pairs[0].Run.Rounds, m.Pairs[0].Run.Stop.Look
}

// TestGateProgressOnTerminal: through a simulated gate of many rounds and
// looks, the bar's count of rounds never goes back, ends at the rounds
// run of as many planned, shows an ETA after the first round, and keeps
// to the terminal's width.
func TestGateProgressOnTerminal(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	out, rounds, _ := simulatedGate(t, progress.Bar)
	counts := regexp.MustCompile(`\] (\d+)/(\d+) rounds`)
	last, eta := -1, false
	var final string
	for _, f := range strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if n := utf8.RuneCountInString(f); n > 80 {
			t.Errorf("%d columns: %q", n, f)
		}
		m := counts.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		done, _ := strconv.Atoi(m[1])
		planned, _ := strconv.Atoi(m[2])
		if done < last || planned < done {
			t.Errorf("%d/%d after %d done: %q", done, planned, last, f)
		}
		last, final = done, f
		eta = eta || done == 1 && strings.Contains(f, " left")
	}
	if want := fmt.Sprintf("] %d/%d rounds", rounds, rounds); !strings.Contains(final, want) {
		t.Errorf("last frame %q, want %q", final, want)
	}
	if !eta {
		t.Errorf("no ETA after the first round:\n%s", out)
	}
	if strings.Contains(out, "irq.hard") {
		t.Errorf("the bar printed a trial's detail:\n%s", out)
	}
}

// TestGateProgressPiped: piped, a simulated gate prints a line per trial
// and per look and the gate's three of its own (the pairing, the looks'
// plan, why it stopped), each within progress.MaxLine, the trials' lines
// naming the gated metric only; -v names every metric.
func TestGateProgressPiped(t *testing.T) {
	out, rounds, looks := simulatedGate(t, progress.Lines)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 2*rounds+looks+3 {
		t.Errorf("%d lines for %d rounds and %d looks:\n%s", len(lines), rounds, looks, out)
	}
	trials := 0
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > progress.MaxLine {
			t.Errorf("%d characters: %q", n, l)
		}
		if strings.Contains(l, "trial done") {
			trials++
			if !strings.HasSuffix(l, "n=2000") || strings.Contains(l, "irq.hard") {
				t.Errorf("a trial's line does not name only the gated metric: %q", l)
			}
		}
	}
	if trials != 2*rounds {
		t.Errorf("%d trial lines for %d rounds of two", trials, rounds)
	}
	verbose, _, _ := simulatedGate(t, progress.Verbose)
	if !strings.Contains(verbose, "irq.hard.virtio40-reporting n=0") || !strings.Contains(verbose, "attaching tracers") {
		t.Errorf("-v lacks every metric and step:\n%.2000s", verbose)
	}
}

// TestGateProgressBudget: under a budget, the rounds planned that the bar
// shows are those the plan will end at (in virtual time, at most the
// boots' last look, never the round cap), the time left it shows never
// passes the budget, and the gate ends within it.
func TestGateProgressBudget(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	var log bytes.Buffer
	targets := []Target{
		&stepTarget{name: "base", scale: 1, rng: rand.New(rand.NewPCG(1, 2)), sleep: 40 * time.Millisecond, clock: result.ClockVirtual},
		&stepTarget{name: "head", scale: 1.1, rng: rand.New(rand.NewPCG(3, 4)), sleep: 40 * time.Millisecond, clock: result.ClockVirtual},
	}
	sp := Spec{Scenarios: []*scenarios.Scenario{{Name: "tcp-rr-small", Trials: 1, Duration: time.Second,
		Gate: result.GatePolicy{"tcp.rr": {"p99": 0.1}}}}}
	const budget = 3 * time.Second
	g := PairGate{RoundsOptions: RoundsOptions{Log: &log, Compare: report0(), Progress: progress.Bar}, Budget: budget, Seed: 1}
	start := time.Now()
	if _, err := g.Gate(context.Background(), targets, sp); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > budget+time.Second {
		t.Errorf("the gate took %v under a %v budget", took, budget)
	}
	counts := regexp.MustCompile(`\] (\d+)/(\d+) rounds(?:, (\S+) left)?`)
	for _, f := range strings.FieldsFunc(log.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
		m := counts.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		if planned, _ := strconv.Atoi(m[2]); planned > stats.BootLooks[len(stats.BootLooks)-1] {
			t.Errorf("%d rounds planned in virtual time, past the boots' last look: %q", planned, f)
		}
		if m[3] != "" {
			left, err := time.ParseDuration(m[3])
			if err == nil && left > budget {
				t.Errorf("%v left under a %v budget: %q", left, budget, f)
			}
		}
	}
}
