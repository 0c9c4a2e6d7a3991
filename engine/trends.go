package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// A pull request's report shows, under its verdicts, each gated
// percentile of the head against main's last commits in the history
// store (report.Trend). The values on both sides are taken as the
// history's series are: each commit's median over its trials.

// DefaultTrendRef and DefaultTrendCommits are the branch and the number
// of its last commits a trend draws on when TrendOptions leave them out.
const (
	DefaultTrendRef     = "main"
	DefaultTrendCommits = 20
)

// TrendOptions say which of a store's commits the trends draw on.
type TrendOptions struct {
	// Ref is the branch the records were added from (history add --ref);
	// "main" matches "refs/heads/main" too. Empty is DefaultTrendRef.
	Ref string
	// N is how many of the branch's last commits; 0 is
	// DefaultTrendCommits.
	N int
}

func (o TrendOptions) withDefaults() TrendOptions {
	if o.Ref == "" {
		o.Ref = DefaultTrendRef
	}
	if o.N <= 0 {
		o.N = DefaultTrendCommits
	}
	return o
}

// ParseTrendCommits reads --history-n: how many commits, 1 or more.
func ParseTrendCommits(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a number of commits, 1 or more, such as 20")
	}
	return n, nil
}

// sameRef reports whether a record's ref is the branch ref names, either
// spelt as a branch name or as a full ref.
func sameRef(recorded, ref string) bool {
	short := func(r string) string { return strings.TrimPrefix(r, "refs/heads/") }
	return recorded == ref || short(recorded) == short(ref)
}

// AddTrends reads the store spec names (history.Open) and sets m.Trends
// (Trends). A git store whose branch does not exist yet is an empty
// history: each trend then says that main has no commit of it. A
// directory that does not exist is an error, a name mistyped more
// likely than a history not begun.
func AddTrends(ctx context.Context, m *report.Matrix, spec string, opt TrendOptions) error {
	s, err := history.Open(spec)
	if err != nil {
		return err
	}
	v, err := s.Read(ctx)
	if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(spec, "git:") {
		v = nil
	} else if err != nil {
		return err
	}
	if v != nil {
		defer v.Close()
	}
	ts, err := Trends(v, m, opt)
	if err != nil {
		return err
	}
	m.Trends = ts
	return nil
}

// Trends returns a trend for each gated verdict of m: the last opt.N
// commits of opt.Ref in v (nil: an empty store) with that scenario,
// metric and percentile, of the candidate's target (else of the one
// target the history has it for), and the candidate's value from its
// Result. An error is a record of v's that does not read.
func Trends(v *history.View, m *report.Matrix, opt TrendOptions) ([]report.Trend, error) {
	opt = opt.withDefaults()
	type want struct {
		key  changepoint.Key // its Target is the candidate's
		pair int
	}
	var wants []want
	var sel report.Selection
	for i, pair := range m.Pairs {
		for _, sc := range pair.Scenarios {
			for _, vd := range sc.Verdicts {
				if !vd.Gated {
					continue
				}
				w := want{key: changepoint.Key{Target: pair.Cand.Target, Scenario: sc.Name, Metric: vd.Metric, Percentile: vd.Quantile}, pair: i}
				if slices.ContainsFunc(wants, func(o want) bool { return o.key == w.key }) {
					continue
				}
				wants = append(wants, w)
				if !slices.Contains(sel.Metrics, vd.Metric) {
					sel.Metrics = append(sel.Metrics, vd.Metric)
				}
				if !slices.Contains(sel.Percentiles, vd.Quantile) {
					sel.Percentiles = append(sel.Percentiles, vd.Quantile)
				}
			}
		}
	}
	if len(wants) == 0 {
		return nil, nil
	}
	cands := make([][]changepoint.Series, len(m.Pairs))
	for i := range m.Pairs {
		if i+1 < len(m.Targets) && m.Targets[i+1].Result != nil {
			cands[i] = candidateSeries(m.Targets[i+1].Result, sel)
		}
	}
	var series []changepoint.Series
	if v != nil {
		var err error
		if series, err = report.ReadSeriesOf(v, lastCommits(v.Index.Entries, opt), sel); err != nil {
			return nil, err
		}
	}
	var out []report.Trend
	for _, w := range wants {
		t := report.Trend{Scenario: w.key.Scenario, Metric: w.key.Metric, Quantile: w.key.Percentile, Ref: opt.Ref, Candidate: w.key.Target, Cand: math.NaN()}
		key := w.key
		if c := pick(cands[w.pair], key); c != nil && len(c.Points) == 1 {
			t.Cand, key.Target = c.Points[0].Center, c.Key.Target
		}
		if s := pick(series, key); s != nil {
			t.Target = s.Key.Target
			for _, p := range s.Points {
				t.Commits = append(t.Commits, p.Commit)
				t.Times = append(t.Times, p.Time)
				t.Values = append(t.Values, p.Center)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// lastCommits are the entries of ref's last n commits, in the index's
// order (oldest first).
func lastCommits(es []history.Entry, opt TrendOptions) []history.Entry {
	commits := map[string]bool{}
	first := len(es)
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if !sameRef(e.Ref, opt.Ref) {
			continue
		}
		if !commits[e.Commit] {
			if len(commits) == opt.N {
				break
			}
			commits[e.Commit] = true
		}
		first = i
	}
	var out []history.Entry
	for _, e := range es[first:] {
		if sameRef(e.Ref, opt.Ref) && commits[e.Commit] {
			out = append(out, e)
		}
	}
	return out
}

// pick is the series of k, or, when none has k's target, the one series
// of k's scenario, metric and percentile if only one target has it.
func pick(series []changepoint.Series, k changepoint.Key) *changepoint.Series {
	var same []*changepoint.Series
	for i := range series {
		s := &series[i]
		if s.Key == k {
			return s
		}
		if s.Key.Scenario == k.Scenario && s.Key.Metric == k.Metric && s.Key.Percentile == k.Percentile {
			same = append(same, s)
		}
	}
	if len(same) == 1 {
		return same[0]
	}
	return nil
}

// candidateSeries are the candidate Result's series of sel, as a record
// of it would give them: a point each, its trials' median.
func candidateSeries(r *result.Result, sel report.Selection) []changepoint.Series {
	if r.Target.Name == "" {
		return nil
	}
	b := report.NewSeriesBuilder(sel)
	b.Add(&history.Record{Commit: "candidate", Target: r.Target.Name, Result: r}, "")
	return b.Series()
}
