package render

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// pairedReport is a same-job gate's report built by hand: sched.runq's
// medians per trial are 7.65µs and 6.75µs while the rounds put the head
// 27.9% slower (what a paired estimate can say of such medians), and
// sched.wakeup, with events in 3 of the rounds alone, has no interval
// (inconclusive, it is annotated and a skipped test case).
func pairedReport() *report.Report {
	inf := math.Inf(1)
	return &report.Report{
		Base: report.Side{Target: "base", KernelRelease: "6.18.44"},
		Cand: report.Side{Target: "head", KernelRelease: "6.18.44"},
		Scenarios: []report.ScenarioReport{{
			Name: "pipe-pingpong",
			Verdicts: []stats.Verdict{
				{Metric: "sched.runq", Quantile: "p50", Base: 7650, Cand: 6750, Ratio: 1.279, Lo: 1.05, Hi: 1.52, Kind: stats.NotGated, BaseTrials: 24, CandTrials: 24, Rounds: 24},
				{Metric: "sched.runq", Quantile: "p99", Base: 2.93e6, Cand: 3.03e6, Ratio: 0.97, Lo: 0.93, Hi: 1.01, Threshold: 0.1, Gated: true, Kind: stats.NoChange, BaseTrials: 24, CandTrials: 24, Rounds: 24},
				{Metric: "sched.wakeup", Quantile: "p99", Base: 5100, Cand: 4900, Ratio: 1.14, Lo: 0, Hi: inf, Threshold: 0.1, Gated: true, Kind: stats.Inconclusive, BaseTrials: 24, CandTrials: 24, Rounds: 3},
			},
		}},
	}
}

// TestPairedGolden: a paired report's tables show the baseline's median
// and the candidate's as it times the delta, say so above the table, and
// print an interval that so few rounds cannot bound as their count.
func TestPairedGolden(t *testing.T) {
	for _, f := range []Format{FormatText, FormatMarkdown, FormatGitHub, FormatJUnit} {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteReport(&b, pairedReport(), f); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "paired."+string(f), b.Bytes())
			out := b.String()
			if strings.Contains(out, "-100.0%") {
				t.Errorf("an unbounded interval printed as a bound:\n%s", out)
			}
			if !strings.Contains(out, "too few rounds (3)") {
				t.Errorf("no \"too few rounds (3)\":\n%s", out)
			}
		})
	}
}

// pairedFrom draws a same-job gate's Results of n rounds, base and head
// alike, from the recorded trials of pool: each round a trial of each at
// random, so that the medians and the rounds' estimate disagree as real
// noise makes them.
func pairedFrom(r *rand.Rand, pool *result.Result, sides, n int) []*result.Result {
	out := make([]*result.Result, sides)
	for i := range out {
		res := *pool
		sc := pool.Scenarios[0]
		sc.Metrics, sc.Trials = map[string]*result.Metric{}, n
		res.Scenarios = []result.Scenario{sc}
		out[i] = &res
	}
	for name, m := range pool.Scenarios[0].Metrics {
		for _, res := range out {
			pm := &result.Metric{Unit: m.Unit}
			for round := 1; round <= n; round++ {
				tr := m.Trials[r.IntN(len(m.Trials))]
				tr.Round = round
				pm.Trials = append(pm.Trials, tr)
			}
			res.Scenarios[0].Metrics[name] = pm
		}
	}
	return out
}

// parseNs reads FormatNs's text back.
func parseNs(s string) (float64, bool) {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			x, err := strconv.ParseFloat(num, 64)
			return x * u.scale, err == nil
		}
	}
	return 0, false
}

// contradictions lists the rows of a text report whose delta's sign
// disagrees with the values beside it: a lower value called slower, or
// a higher one faster.
func contradictions(text string, targets int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4+5*(targets-1) || strings.TrimSpace(cells[1]) == "metric" {
			continue
		}
		ref, ok := parseNs(strings.TrimSpace(cells[3]))
		if !ok {
			continue
		}
		for k := 1; k < targets; k++ {
			value, ok := parseNs(strings.TrimSpace(cells[4+5*(k-1)]))
			delta := strings.TrimSpace(cells[5+5*(k-1)])
			if !ok || delta == "-" {
				continue
			}
			slower := strings.HasPrefix(delta, "+") || strings.HasPrefix(delta, "×")
			faster := strings.HasPrefix(delta, "-")
			if slower && value < ref || faster && value > ref {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestPairedValuesAgreeWithDeltas: in every paired report built from
// recorded trials (gates of 2 to 30 rounds, and a matrix of three), no
// row calls a value lower than the reference's slower, or a higher one
// faster. Each side's median per trial would: the same gates, their
// medians beside the deltas, contradict themselves in some rows.
func TestPairedValuesAgreeWithDeltas(t *testing.T) {
	for _, file := range []string{"trials-syscall-read.json", "trials-pipe-pingpong.json"} {
		pool, err := result.Load(filepath.Join("..", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 7))
		medians, rows := 0, 0
		for _, n := range []int{2, 3, 5, 10, 30} {
			for range 8 {
				rs := pairedFrom(r, pool, 3, n)
				rep, err := report.Compare(rs[0], rs[1], report.Options{})
				if err != nil {
					t.Fatal(err)
				}
				m, err := report.CompareMatrix([]report.MatrixTarget{{Name: "a", Result: rs[0]}, {Name: "b", Result: rs[1]}, {Name: "c", Result: rs[2]}}, report.Options{Resamples: 50})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					m       *report.Matrix
					targets int
				}{{rep.Matrix(), 2}, {m, 3}} {
					var b bytes.Buffer
					if err := WriteText(&b, c.m, TextOptions{}); err != nil {
						t.Fatal(err)
					}
					if bad := contradictions(b.String(), c.targets); len(bad) > 0 {
						t.Errorf("%s, %d rounds: %d rows contradict their deltas:\n%s", file, n, len(bad), strings.Join(bad, "\n"))
					}
				}
				for _, v := range rep.Scenarios[0].Verdicts {
					rows++
					if d := v.Ratio - 1; d*(v.Cand-v.Base) < 0 && math.Abs(d) >= 0.0005 {
						medians++
					}
				}
			}
		}
		t.Logf("%s: the medians would contradict %d of %d deltas", file, medians, rows)
		if medians == 0 {
			t.Errorf("%s: no gate whose medians contradict its delta; the test shows nothing", file)
		}
	}
}

// The note above a paired table counts its rounds, a range where some
// metrics had events in fewer rounds than others.
func TestValuesNote(t *testing.T) {
	m := pairedReport().Matrix()
	got := valuesNote(m, m.Scenarios[0])
	want := fmt.Sprintf("values: baseline = the median of its trials'; candidate = baseline × (1 + delta), the delta estimated from %s paired rounds", "3-24")
	if got != want {
		t.Errorf("valuesNote = %q, want %q", got, want)
	}
	if n := valuesNote(sampleReport().Matrix(), sampleReport().Matrix().Scenarios[0]); n != "" {
		t.Errorf("a report of two samples has a note: %q", n)
	}
}
