package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/historytest"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// trendFixture is a store of 30 commits of main and 5 of a feature
// branch in between, each 5 real recorded syscall-read trials, and a
// gate report of those trials against the same trials made shift×
// slower.
type trendFixture struct {
	store *history.Store
	main  []string // main's commits, oldest first
	m     *report.Matrix
	cand  *result.Result
}

func newTrendFixture(t *testing.T, spec string, shift float64) *trendFixture {
	t.Helper()
	p := historytest.LoadPool(t, "trials-syscall-read.json", "syscall.read", shift)
	s, err := history.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(51, 52))
	sample := func(shift float64) *result.Result {
		res := *p.Res
		sc := p.Res.Scenarios[0]
		m := &result.Metric{Unit: "ns"}
		for range 5 {
			src := p.Trials[shift]
			m.Trials = append(m.Trials, src[r.IntN(len(src))])
		}
		sc.Metrics = map[string]*result.Metric{p.Metric: m}
		res.Scenarios = []result.Scenario{sc}
		return &res
	}
	f := &trendFixture{store: s}
	for c := range 35 {
		ref, commit := "refs/heads/main", fmt.Sprintf("%040x", c+1)
		if c%7 == 3 {
			ref = "feature"
		}
		rec, err := history.NewRecord(sample(1), commit, time.Unix(int64(c)*3600, 0), ref, history.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(context.Background(), rec, history.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		if ref != "feature" {
			f.main = append(f.main, commit)
		}
	}
	base := sample(1)
	f.cand = sample(shift)
	rep, err := report.Compare(base, f.cand, report.Options{Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	f.m = rep.Matrix()
	return f
}

func (f *trendFixture) trends(t *testing.T, opt TrendOptions) []report.Trend {
	t.Helper()
	v, err := f.store.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ts, err := Trends(v, f.m, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The trend of each gated percentile: main's last N commits, the
// feature branch's left out, each commit's median, and the candidate's
// median of its trials beside them.
func TestTrends(t *testing.T) {
	f := newTrendFixture(t, t.TempDir(), 1.5)
	var gated []string
	for _, sc := range f.m.Pairs[0].Scenarios {
		for _, v := range sc.Verdicts {
			if v.Gated {
				gated = append(gated, sc.Name+" "+v.Metric+" "+v.Quantile)
			}
		}
	}
	ts := f.trends(t, TrendOptions{})
	if len(ts) != len(gated) || len(ts) == 0 {
		t.Fatalf("%d trends, want one per gated verdict: %v", len(ts), gated)
	}
	tr := ts[0]
	if tr.Scenario+" "+tr.Metric+" "+tr.Quantile != gated[0] || tr.Ref != DefaultTrendRef || tr.Target != f.cand.Target.Name {
		t.Errorf("trend %s %s %s of %s on %s, want %s of %s on main", tr.Scenario, tr.Metric, tr.Quantile, tr.Target, tr.Ref, gated[0], f.cand.Target.Name)
	}
	if want := f.main[len(f.main)-DefaultTrendCommits:]; !slices.Equal(tr.Commits, want) {
		t.Errorf("commits %v,\nwant main's last %d %v", tr.Commits, DefaultTrendCommits, want)
	}
	// The candidate's value is its trials' median, as a commit's is.
	q, _ := stats.LookupPercentile(tr.Quantile)
	var xs []float64
	for _, tr := range f.cand.Scenarios[0].Metrics[tr.Metric].Trials {
		xs = append(xs, tr.Histogram.Quantile(q.Q))
	}
	if med, _, _ := changepoint.MedianInterval(xs, 0.95); math.Abs(tr.Cand-med) > 1e-9*med {
		t.Errorf("candidate %g, want its trials' median %g", tr.Cand, med)
	}
	// 1.5× slower than the same trials: above every commit of main.
	if below, _ := tr.Place(); below != len(tr.Values) {
		t.Errorf("the 1.5× slower candidate is above %d of %d commits (%v, candidate %g)", below, len(tr.Values), tr.Values, tr.Cand)
	}

	if ts := f.trends(t, TrendOptions{Ref: "main", N: 5}); len(ts[0].Values) != 5 || !slices.Equal(ts[0].Commits, f.main[len(f.main)-5:]) {
		t.Errorf("N 5: commits %v, want %v", ts[0].Commits, f.main[len(f.main)-5:])
	}
	if ts := f.trends(t, TrendOptions{Ref: "feature"}); len(ts[0].Values) != 5 {
		t.Errorf("the feature branch: %d commits, want its 5", len(ts[0].Values))
	}
	if ts := f.trends(t, TrendOptions{Ref: "release"}); len(ts[0].Values) != 0 {
		t.Errorf("a branch the store has not: %d commits", len(ts[0].Values))
	}

	// A candidate of another target name: main's history of the one
	// target it has.
	f.m.Pairs[0].Cand.Target = "runner-2"
	cand := *f.cand
	cand.Target.Name = "runner-2"
	f.m.Targets[1].Result = &cand
	if ts := f.trends(t, TrendOptions{}); len(ts[0].Values) != DefaultTrendCommits || ts[0].Target != f.cand.Target.Name || math.IsNaN(ts[0].Cand) {
		t.Errorf("another target name: %d commits of %q, candidate %g; want main's of its one target", len(ts[0].Values), ts[0].Target, ts[0].Cand)
	}
	// No candidate Result at hand: no value, the history still shown.
	f.m.Targets[1].Result = nil
	if ts := f.trends(t, TrendOptions{}); len(ts[0].Values) != DefaultTrendCommits || !math.IsNaN(ts[0].Cand) {
		t.Errorf("no candidate Result: %d commits, candidate %g", len(ts[0].Values), ts[0].Cand)
	}
}

// AddTrends on a git store whose branch the first history add has not
// made yet: every trend is there, with no commit.
func TestAddTrendsNoBranch(t *testing.T) {
	testenv.Need(t, testenv.Tool("git", ""))
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bare := filepath.Join(dir, "repo.git")
	if out, err := exec.Command(git, "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	f := newTrendFixture(t, filepath.Join(dir, "dirstore"), 1.5)
	if err := AddTrends(context.Background(), f.m, "git:"+bare+"#tailgate-history", TrendOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(f.m.Trends) == 0 || len(f.m.Trends[0].Values) != 0 || math.IsNaN(f.m.Trends[0].Cand) {
		t.Errorf("no branch yet: trends %+v, want each with the candidate and no commit", f.m.Trends)
	}
	// And the directory store it was made in, through the same call.
	if err := AddTrends(context.Background(), f.m, filepath.Join(dir, "dirstore"), TrendOptions{N: 3}); err != nil {
		t.Fatal(err)
	}
	if len(f.m.Trends[0].Values) != 3 {
		t.Errorf("the directory store: %d commits, want 3", len(f.m.Trends[0].Values))
	}
	// A directory that is not there: an error, not an empty history.
	if err := AddTrends(context.Background(), f.m, filepath.Join(dir, "no-such-store"), TrendOptions{}); err == nil {
		t.Error("a directory store that does not exist: no error")
	}
}
