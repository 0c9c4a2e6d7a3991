// Package historytest draws histories for tests: commits whose trials
// are resampled from real recorded runs (report/testdata), built into
// series as `history changes` builds them, through records.
package historytest

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// Pool is the per-trial histograms of a real recorded run (each trial a
// separate worker process), and the same made shift× slower.
type Pool struct {
	Res    *result.Result
	Metric string
	// Trials by shift; 1 holds the recorded ones.
	Trials map[float64][]result.Trial
}

// Testdata is the path of a file of report/testdata.
func Testdata(file string) string {
	_, src, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(src), "..", "testdata", file)
}

// LoadPool reads metric's trials of report/testdata's file, and makes
// them each of shifts times slower too.
func LoadPool(t testing.TB, file, metric string, shifts ...float64) *Pool {
	t.Helper()
	r, err := result.Load(Testdata(file))
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{Res: r, Metric: metric, Trials: map[float64][]result.Trial{}}
	src := r.Scenarios[0].Metrics[metric].Trials
	for _, s := range append(shifts, 1) {
		var ts []result.Trial
		for _, tr := range src {
			if s != 1 {
				tr.Histogram = statstest.Scaled(tr.Histogram, s)
				tr.Summary = result.Summarize(tr.Histogram)
			}
			ts = append(ts, tr)
		}
		p.Trials[s] = ts
	}
	return p
}

// Result is the pool's Result with perCommit trials drawn at random
// from the pool's trials at shift.
func (p *Pool) Result(r *rand.Rand, perCommit int, shift float64) *result.Result {
	res := *p.Res
	sc := p.Res.Scenarios[0]
	m := &result.Metric{Unit: "ns"}
	src := p.Trials[shift]
	for range perCommit {
		m.Trials = append(m.Trials, src[r.IntN(len(src))])
	}
	sc.Metrics = map[string]*result.Metric{p.Metric: m}
	res.Scenarios = []result.Scenario{sc}
	return &res
}

// History makes a series of commits, each a Result of perCommit trials
// drawn at random from the pool, those from commit stepAt on (0: none)
// made shift× slower, and builds its series as `history changes` does,
// through records.
func (p *Pool) History(r *rand.Rand, commits, perCommit, stepAt int, shift float64) []changepoint.Series {
	b := report.NewSeriesBuilder(report.Selection{})
	for c := range commits {
		s := 1.0
		if stepAt > 0 && c >= stepAt {
			s = shift
		}
		rec, err := history.NewRecord(p.Result(r, perCommit, s), fmt.Sprintf("%040x", c+1), time.Unix(int64(c)*3600, 0), "main", history.Provenance{})
		if err != nil {
			panic(err)
		}
		b.Add(rec, "")
	}
	return b.Series()
}

// LoadPoolAt is LoadPool with shifts that make the trials' median p99
// each of ns, and those shifts.
func LoadPoolAt(t testing.TB, file, metric string, ns ...float64) (*Pool, []float64) {
	t.Helper()
	p := LoadPool(t, file, metric)
	var p99 []float64
	for _, tr := range p.Trials[1] {
		p99 = append(p99, tr.Summary.P99)
	}
	med, _, _ := changepoint.MedianInterval(p99, 0)
	var shifts []float64
	for _, v := range ns {
		shifts = append(shifts, v/med)
	}
	return LoadPool(t, file, metric, shifts...), shifts
}
