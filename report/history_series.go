package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/changepoint"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// A history's series, as report/changepoint tests them: each record's
// summary (or the record) in, one series per target, scenario, metric,
// percentile, clock and parameters out.

// Selection says which series to build: the metrics and percentiles
// named, or (empty) what each record's gate policy gates.
type Selection struct {
	Metrics     []string
	Percentiles []string
}

// SeriesBuilder gathers series from records, one at a time, keeping only the
// quantiles: a record's histograms are not held once added.
type SeriesBuilder struct {
	sel    Selection
	series map[changepoint.Key]*changepoint.Series
}

// NewSeriesBuilder returns a Builder for sel. The percentile names must be
// stats.Percentiles' (CheckSelection).
func NewSeriesBuilder(sel Selection) *SeriesBuilder {
	return &SeriesBuilder{sel: sel, series: map[changepoint.Key]*changepoint.Series{}}
}

// CheckSelection refuses a percentile report does not know.
func CheckSelection(sel Selection) error {
	for _, p := range sel.Percentiles {
		if _, ok := stats.LookupPercentile(p); !ok {
			return fmt.Errorf("unknown percentile %q (want p50, p90, p99, p99.9 or max)", p)
		}
	}
	return nil
}

// Add adds rec's points. Records must come in series order (the index's).
func (b *SeriesBuilder) Add(rec *history.Record, path string) {
	b.AddSummary(history.Summarize(rec, ""), rec.Time, path)
}

// AddSummary adds the points of a record's summary, the record made at
// time at and stored at path. It reports false, and adds nothing, when
// the summary lacks a percentile the selection needs (read the record
// then, and Add it).
func (b *SeriesBuilder) AddSummary(s *history.Summary, at time.Time, path string) bool {
	type add struct {
		k     changepoint.Key
		gated bool
		pt    changepoint.Point
	}
	var adds []add
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		policy, _ := GatePolicy(&result.Scenario{Name: sc.Name, Gate: sc.Gate, Definition: sc.Definition})
		for _, mname := range sortedKeys(sc.Metrics) {
			if len(b.sel.Metrics) > 0 && !slices.Contains(b.sel.Metrics, mname) {
				continue
			}
			gated := policy[mname]
			if gated == nil {
				gated = policy["*"]
			}
			pcts := b.sel.Percentiles
			if len(pcts) == 0 {
				pcts = sortedKeys(gated)
			}
			for _, pname := range pcts {
				if _, ok := stats.LookupPercentile(pname); !ok {
					continue
				}
				xs, ok := sc.Metrics[mname][pname]
				if !ok {
					return false
				}
				if len(xs) == 0 {
					continue
				}
				pt := changepoint.Point{Commit: s.Commit, Time: at, Record: path, Trials: slices.Clone(xs)}
				pt.Center, pt.Lo, pt.Hi = changepoint.MedianInterval(pt.Trials, 0.95)
				_, isGated := gated[pname]
				adds = append(adds, add{changepoint.Key{Target: s.Target, Scenario: sc.Name, Metric: mname, Percentile: pname, Clock: s.Clock, Params: shortParams(sc.Params)}, isGated, pt})
			}
		}
	}
	for _, a := range adds {
		sr := b.series[a.k]
		if sr == nil {
			sr = &changepoint.Series{Key: a.k}
			b.series[a.k] = sr
		}
		sr.Gated = sr.Gated || a.gated
		sr.Points = append(sr.Points, a.pt)
	}
	return true
}

// Series returns the series gathered, in key order, the epochs of one
// target, scenario, metric and percentile in the order of their first
// points. A key names a clock or parameters only where the records of
// its four differ in them.
func (b *SeriesBuilder) Series() []changepoint.Series {
	clocks, params := map[changepoint.Key]map[string]bool{}, map[changepoint.Key]map[string]bool{}
	for k := range b.series {
		if clocks[seriesBase(k)] == nil {
			clocks[seriesBase(k)], params[seriesBase(k)] = map[string]bool{}, map[string]bool{}
		}
		clocks[seriesBase(k)][k.Clock] = true
		params[seriesBase(k)][k.Params] = true
	}
	var out []changepoint.Series
	for k, s := range b.series {
		s := *s
		if len(clocks[seriesBase(k)]) == 1 {
			s.Key.Clock = ""
		}
		if len(params[seriesBase(k)]) == 1 {
			s.Key.Params = ""
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b changepoint.Series) int {
		return cmp.Or(changepoint.CompareKeys(a.Key, b.Key), a.Points[0].Time.Compare(b.Points[0].Time), cmp.Compare(a.Key.Clock, b.Key.Clock), cmp.Compare(a.Key.Params, b.Key.Params))
	})
	return out
}

// shortParams is a parameter digest as a key shows it.
func shortParams(p string) string { return p[:min(12, len(p))] }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// seriesBase is k without what tells its epochs apart.
func seriesBase(k changepoint.Key) changepoint.Key { k.Clock, k.Params = "", ""; return k }

// ReadSeries reads every record of v into the series sel picks: from the
// records' summaries, and the records themselves where a summary is
// missing, stale or lacks a percentile sel names.
func ReadSeries(v *history.View, sel Selection) ([]changepoint.Series, error) {
	return ReadSeriesOf(v, v.Index.Entries, sel)
}

// ReadSeriesOf is ReadSeries over some of v's entries.
func ReadSeriesOf(v *history.View, es []history.Entry, sel Selection) ([]changepoint.Series, error) {
	b := NewSeriesBuilder(sel)
	for _, e := range es {
		s, err := v.Summary(e)
		if err != nil {
			return nil, err
		}
		if b.AddSummary(s, e.Time, e.Path) {
			continue
		}
		rec, err := v.Record(e)
		if err != nil {
			return nil, err
		}
		b.Add(rec, e.Path)
	}
	return b.Series(), nil
}
