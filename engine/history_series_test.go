package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/historytest"
	"github.com/tailgate-ci/tailgate/report/render"
)

// DetectChanges reads a store's records into series and detects their change
// points; a store with no series to test is ErrNoSeries, naming what was
// selected.
func TestDetectChanges(t *testing.T) {
	ctx := context.Background()
	s, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	read := func() *history.View {
		v, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	_, err = DetectChanges(read(), report.Selection{Metrics: []string{"syscall.read"}}, changepoint.Options{})
	if !errors.Is(err, ErrNoSeries) || !strings.Contains(err.Error(), "no record has metric syscall.read at (gated)") {
		t.Errorf("an empty store: %v, want ErrNoSeries naming the selection", err)
	}

	r, err := result.Load(historytest.Testdata("trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	for c := range 6 {
		rec, err := history.NewRecord(r, fmt.Sprintf("%040x", c+1), time.Unix(int64(c)*3600, 0), "main", history.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(ctx, rec, history.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := DetectChanges(read(), report.Selection{}, changepoint.Options{Level: changepoint.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Series) == 0 || len(rep.Changes) != 0 {
		t.Errorf("six commits of the same trials: %d series, %d change points; want some series, no change", len(rep.Series), len(rep.Changes))
	}
	for _, ts := range rep.Series {
		if len(ts.Points) != 6 {
			t.Errorf("series %v has %d points, want one per commit", ts.Key, len(ts.Points))
		}
	}
	if _, err := DetectChanges(read(), report.Selection{Metrics: []string{"no.such"}}, changepoint.Options{}); !errors.Is(err, ErrNoSeries) {
		t.Errorf("a metric no record has: %v, want ErrNoSeries", err)
	}
}

// storeOf adds a Result per commit to a directory store, each of per
// trials drawn from the pool at shifts[c], and reads it back.
func storeOf(t *testing.T, p *historytest.Pool, r *rand.Rand, per int, shifts []float64) *history.View {
	t.Helper()
	ctx := context.Background()
	s, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for c, shift := range shifts {
		rec, err := history.NewRecord(p.Result(r, per, shift), fmt.Sprintf("%040x", c+1), time.Unix(int64(c)*3600, 0), "main", history.Provenance{})
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
	p, f := historytest.LoadPoolAt(t, "trials-syscall-read.json", "syscall.read", 1900, 3000)
	r := rand.New(rand.NewPCG(44, 10))
	step := []float64{f[0], f[0], f[0], f[0], f[1], f[1], f[1], f[1]}
	rep, err := DetectChanges(storeOf(t, p, r, 5, step), report.Selection{}, changepoint.Options{Seed: 1})
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
	rep, err = DetectChanges(storeOf(t, p, r, 5, flat), report.Selection{}, changepoint.Options{Seed: 1})
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
	p, f := historytest.LoadPoolAt(t, "trials-syscall-read.json", "syscall.read", 1900, 3000)
	r := rand.New(rand.NewPCG(44, 11))
	step := []float64{f[0], f[0], f[0], f[0], f[1], f[1], f[1], f[1]}
	rep, err := DetectChanges(storeOf(t, p, r, 1, step), report.Selection{}, changepoint.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tested != 0 || len(rep.Changes) != 0 || len(rep.Warnings) == 0 || rep.Warnings[len(rep.Warnings)-1].Kind != changepoint.WarnFewValues {
		t.Fatalf("8 commits of 1 trial: %d tested, changes %v, warnings %v; want none tested and a few-values warning", rep.Tested, rep.Changes, rep.Warnings)
	}
	var b strings.Builder
	if err := render.WriteChanges(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	line := "8 commits, 8 trials in all: no split of them can reach p < 0.01; not tested"
	if !strings.Contains(b.String(), line) || !strings.Contains(b.String(), "1 series, not tested: it is too short to test") {
		t.Errorf("text:\n%s\nwant the headline and the line %q", b.String(), line)
	}
}
