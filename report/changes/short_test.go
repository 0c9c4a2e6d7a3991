package changes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// scaledTo is the pool's trials scaled so that their median p99 is ns.
func scaledTo(t *testing.T, file, metric string, ns ...float64) (*pool, []float64) {
	t.Helper()
	p := loadPool(t, file, metric)
	var p99 []float64
	for _, tr := range p.trials[1] {
		p99 = append(p99, tr.Summary.P99)
	}
	med, _, _ := MedianInterval(p99, 0)
	var shifts []float64
	for _, v := range ns {
		shifts = append(shifts, v/med)
	}
	return loadPool(t, file, metric, shifts...), shifts
}

// storeOf adds a Result per commit to a directory store, each of per
// trials drawn from the pool at shifts[c], and reads it back.
func storeOf(t *testing.T, p *pool, r *rand.Rand, per int, shifts []float64) *history.View {
	t.Helper()
	ctx := context.Background()
	s, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for c, shift := range shifts {
		res := *p.res
		sc := p.res.Scenarios[0]
		m := &result.Metric{Unit: "ns"}
		for range per {
			m.Trials = append(m.Trials, p.trials[shift][r.IntN(len(p.trials[shift]))])
		}
		sc.Metrics = map[string]*result.Metric{p.metric: m}
		res.Scenarios = []result.Scenario{sc}
		rec, err := history.NewRecord(&res, fmt.Sprintf("%040x", c+1), time.Unix(int64(c)*3600, 0), "main", history.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(ctx, rec, history.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	v, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestEightCommitStep is issue 44's history: eight commits of five
// trials, p99 1.9µs then 3µs. Tested on one value per commit, no split
// of eight could reach p < 1% (1/C(8,4) = 1/70 at best) and no change
// point was found; on the trials the step is found, at its commit, and a
// flat history of the same shape has none.
func TestEightCommitStep(t *testing.T) {
	p, f := scaledTo(t, "trials-syscall-read.json", "syscall.read", 1900, 3000)
	r := rand.New(rand.NewPCG(44, 10))
	step := []float64{f[0], f[0], f[0], f[0], f[1], f[1], f[1], f[1]}
	rep, err := Find(storeOf(t, p, r, 5, step), Selection{}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 {
		t.Fatalf("the step: %d change points, want 1; report %+v", len(rep.Changes), rep)
	}
	c := rep.Changes[0]
	want := 3000.0 / 1900
	if c.Index != 4 || !c.Regression() || c.Ratio.Lo > want || c.Ratio.Hi < want || c.P > c.Alpha {
		t.Errorf("change %+v, want a regression at commit 4 whose ratio interval holds ×%.2f", c, want)
	}
	if math.Abs(c.Before.Center/1900-1) > 0.15 || math.Abs(c.After.Center/3000-1) > 0.15 {
		t.Errorf("sides %v → %v, want about 1.9µs → 3µs", c.Before.Center, c.After.Center)
	}

	flat := slices.Repeat([]float64{f[0]}, 8)
	rep, err = Find(storeOf(t, p, r, 5, flat), Selection{}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tested != 1 || len(rep.Changes) != 0 {
		t.Errorf("a flat history of the same shape: %d tested, changes %+v; want 1 tested, none", rep.Tested, rep.Changes)
	}
}

// TestTooFewValues: a series with commits enough but one trial each
// cannot reach the level; it is not tested, and one line says so.
func TestTooFewValues(t *testing.T) {
	p, f := scaledTo(t, "trials-syscall-read.json", "syscall.read", 1900, 3000)
	r := rand.New(rand.NewPCG(44, 11))
	step := []float64{f[0], f[0], f[0], f[0], f[1], f[1], f[1], f[1]}
	rep, err := Find(storeOf(t, p, r, 1, step), Selection{}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tested != 0 || len(rep.Changes) != 0 || len(rep.Warnings) == 0 || rep.Warnings[len(rep.Warnings)-1].Kind != WarnFewValues {
		t.Fatalf("8 commits of 1 trial: %d tested, changes %v, warnings %v; want none tested and a few-values warning", rep.Tested, rep.Changes, rep.Warnings)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	line := "8 commits, 8 trials in all: no split of them can reach p < 0.01; not tested"
	if !strings.Contains(b.String(), line) || !strings.Contains(b.String(), "1 series, not tested: it is too short to test") {
		t.Errorf("text:\n%s\nwant the headline and the line %q", b.String(), line)
	}
}

// TestEightCommitRates: how often eight commits of five trials give a
// change point, in seeded simulation: resampled real trials, step-free
// (each commit's trials as they were recorded, then each commit's trials
// all moved by a run offset, log-normal with sd 6%: the spread of
// syscall-read's separate runs, BENCHMARKS.md), and with the issue's
// 1.9µs → 3µs step.
func TestEightCommitRates(t *testing.T) {
	runs := 1000
	if testing.Short() {
		runs = 300
	}
	p, f := scaledTo(t, "trials-syscall-read.json", "syscall.read", 1900, 3000)
	r := rand.New(rand.NewPCG(44, 12))
	rate := func(offsetSD float64, stepAt int) float64 {
		found := 0
		for range runs {
			var s Series
			if stepAt > 0 {
				s = p.history(r, 8, 5, stepAt, f[1]/f[0])[0]
			} else {
				s = p.history(r, 8, 5, 0, 1)[0]
			}
			s = withRunOffsets(r, s, offsetSD)
			if len(Detect([]Series{s}, Options{Seed: r.Uint64()}).Changes) > 0 {
				found++
			}
		}
		return float64(found) / float64(runs)
	}
	// p.history draws from the unscaled trials; the step is ×(3/1.9).
	p.trials[f[1]/f[0]] = loadPool(t, "trials-syscall-read.json", "syscall.read", f[1]/f[0]).trials[f[1]/f[0]]
	flat, offsets, step := rate(0, 0), rate(0.06, 0), rate(0, 4)
	t.Logf("8 commits × 5 trials, %d seeded histories each: step-free %.2f%%, step-free with 6%% run offsets %.2f%%, ×%.2f step found %.2f%%",
		runs, 100*flat, 100*offsets, f[1]/f[0], 100*step)
	if flat > 0.015 || offsets > 0.015 {
		t.Errorf("false change points in %.2f%% (step-free) and %.2f%% (run offsets) of histories, want ≤ 1.5%% at level 1%%", 100*flat, 100*offsets)
	}
	if step < 0.99 {
		t.Errorf("the step found in %.2f%% of histories, want ≥ 99%%", 100*step)
	}
}

// withRunOffsets moves all trials of each commit of s by one factor,
// log-normal with sd (0: none), as a run on another day would.
func withRunOffsets(r *rand.Rand, s Series, sd float64) Series {
	if sd == 0 {
		return s
	}
	pts := slices.Clone(s.Points)
	for i := range pts {
		f := math.Exp(sd * r.NormFloat64())
		pts[i].Trials = slices.Clone(pts[i].Trials)
		for j := range pts[i].Trials {
			pts[i].Trials[j] *= f
		}
		pts[i].Center, pts[i].Lo, pts[i].Hi = MedianInterval(pts[i].Trials, 0.95)
	}
	s.Points = pts
	return s
}
