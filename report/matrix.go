package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// MatrixTarget is one column of a matrix: a target's Result, its trials
// merged.
type MatrixTarget struct {
	Name string
	// Description says what sets the target apart: its kernel and command
	// line, or the sysctls of a host variant.
	Description string
	Result      *result.Result
}

// Matrix compares several targets with the first, the reference. Each
// verdict comes from Compare of the reference and that target, exactly as
// 'tailgate compare REF.json TARGET.json' would judge it.
type Matrix struct {
	Targets []MatrixTarget // Targets[0] is the reference
	// Pairs[i-1] is the comparison of Targets[0] (baseline) with
	// Targets[i] (candidate).
	Pairs     []*Report
	Scenarios []MatrixScenario
	// Trends are the gated percentiles' recent history on a branch, the
	// candidate beside it (changes.Trends fills them); none without a
	// history store.
	Trends []Trend
	// TwoSided says the matrix is one Report's (see Report.Matrix): its
	// targets are named by role, baseline and candidate.
	TwoSided bool
}

// MatrixScenario is one scenario of the reference. Its warnings are the
// pairs' (Pairs[i].Scenarios).
type MatrixScenario struct {
	Name    string
	Metrics []MatrixMetric // the gated metrics first
}

// MatrixMetric is one metric: a row per percentile.
type MatrixMetric struct {
	Name string
	Rows []MatrixRow // in stats.Percentiles order
	// Plot is what its plots show; nil when a target's Result is not at
	// hand (a Report built by hand).
	Plot *Plot
}

// MatrixRow is one percentile of one metric across the targets.
type MatrixRow struct {
	Quantile string
	Cells    []MatrixCell // one per target, in Targets order
}

// MatrixCell is one target's value of a percentile.
type MatrixCell struct {
	Present bool    // the target measured this metric
	Value   float64 // the percentile of the merged trials, ns
	// Lo and Hi are the 95% interval of Value, from the bootstrap
	// variance of its log as a comparison estimates it for each side (NaN
	// for max and for no events).
	Lo, Hi float64
	// Trials holds each trial's own value of the percentile.
	Trials []float64
	// Verdict is the comparison with the reference; nil for the reference
	// itself and where the pair was not compared.
	Verdict *stats.Verdict
}

// CompareMatrix compares every target with the first. opt applies to every
// pair, as to Compare, and the gated tests of all pairs form one family:
// the family-wise false-alarm rate holds for the matrix as a whole.
func CompareMatrix(targets []MatrixTarget, opt Options) (*Matrix, error) {
	if len(targets) < 2 {
		return nil, fmt.Errorf("a matrix needs at least two targets, got %d", len(targets))
	}
	m := &Matrix{Targets: targets}
	ref := targets[0]
	for _, t := range targets[1:] {
		rep, err := compare(ref.Result, t.Result, opt)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s: %w", t.Name, ref.Name, err)
		}
		m.Pairs = append(m.Pairs, rep)
	}
	judgeReports(m.Pairs, opt)
	resamples := opt.Resamples
	if resamples <= 0 {
		resamples = stats.DefaultResamples
	}
	for _, rs := range ref.Result.Scenarios {
		ms := MatrixScenario{Name: rs.Name}
		gate, _ := GatePolicy(&rs)
		pcts := stats.PercentilesFor(gate, opt.Thresholds)
		var names []string
		for _, t := range targets {
			if s := t.Result.Find(rs.Name); s != nil {
				for n := range s.Metrics {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
		slices.Sort(names)
		for _, name := range names {
			if noEvents(targets, rs.Name, name) {
				// Compare notes it once in the scenario's warnings.
				continue
			}
			mm := MatrixMetric{Name: name}
			for _, p := range pcts {
				row := MatrixRow{Quantile: p.Name}
				for ti, t := range targets {
					c := MatrixCell{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
					if s := t.Result.Find(rs.Name); s != nil && s.Metrics[name] != nil {
						c = cellOf(s.Metrics[name], name, p, resamples)
					}
					if ti > 0 {
						c.Verdict = m.Pairs[ti-1].find(rs.Name, name, p.Name)
					}
					row.Cells = append(row.Cells, c)
				}
				mm.Rows = append(mm.Rows, row)
			}
			mm.Plot = m.plot(rs.Name, mm)
			ms.Metrics = append(ms.Metrics, mm)
		}
		ms.Metrics = gatedFirst(ms.Metrics)
		m.Scenarios = append(m.Scenarios, ms)
	}
	return m, nil
}

// Matrix is r as the matrix of its two sides, baseline and candidate,
// which the renderers lay out: a row per verdict, the cells its baseline
// and candidate values.
func (r *Report) Matrix() *Matrix {
	m := &Matrix{
		Targets:  []MatrixTarget{{Name: r.Base.Target, Result: r.BaseResult}, {Name: r.Cand.Target, Result: r.CandResult}},
		Pairs:    []*Report{r},
		TwoSided: true,
	}
	for _, s := range r.Scenarios {
		ms := MatrixScenario{Name: s.Name}
		for i := range s.Verdicts {
			v := &s.Verdicts[i]
			k := slices.IndexFunc(ms.Metrics, func(mm MatrixMetric) bool { return mm.Name == v.Metric })
			if k < 0 {
				k = len(ms.Metrics)
				ms.Metrics = append(ms.Metrics, MatrixMetric{Name: v.Metric})
			}
			ms.Metrics[k].Rows = append(ms.Metrics[k].Rows, MatrixRow{Quantile: v.Quantile, Cells: []MatrixCell{
				{Present: true, Value: v.Base, Lo: math.NaN(), Hi: math.NaN()},
				{Present: true, Value: v.Cand, Lo: math.NaN(), Hi: math.NaN(), Verdict: v},
			}})
		}
		for k := range ms.Metrics {
			ms.Metrics[k].Plot = m.plot(s.Name, ms.Metrics[k])
		}
		ms.Metrics = gatedFirst(ms.Metrics)
		m.Scenarios = append(m.Scenarios, ms)
	}
	return m
}

// plot is the Plot of metric mm of a scenario, at the percentile
// plottedPercentile chooses; nil unless every target's Result is at hand.
func (m *Matrix) plot(scenario string, mm MatrixMetric) *Plot {
	var results []*result.Result
	for _, t := range m.Targets {
		if t.Result == nil {
			return nil
		}
		results = append(results, t.Result)
	}
	p := plottedPercentile(mm)
	verdicts := make([]*stats.Verdict, len(m.Targets))
	for _, row := range mm.Rows {
		if row.Quantile == p.Name {
			for i, c := range row.Cells {
				verdicts[i] = c.Verdict
			}
		}
	}
	return plotOf(results, scenario, mm.Name, p, verdicts)
}

// plottedPercentile is the percentile a metric's per-trial plot shows:
// the highest the gate policy gates (the verdicts say which; the rows are
// in quantile order), else p99.
func plottedPercentile(mm MatrixMetric) stats.Percentile {
	p := stats.Percentile{Name: "p99", Q: 0.99}
	for _, row := range mm.Rows {
		for _, c := range row.Cells {
			if c.Verdict != nil && c.Verdict.Gated {
				if q, ok := hist.ParsePercentile(row.Quantile); ok {
					p = stats.Percentile{Name: row.Quantile, Q: q}
				}
				break
			}
		}
	}
	return p
}

// gatedFirst puts the metrics that have a gated verdict first, the order
// otherwise kept.
func gatedFirst(ms []MatrixMetric) []MatrixMetric {
	gated := func(mm MatrixMetric) bool {
		for _, row := range mm.Rows {
			for _, c := range row.Cells {
				if c.Verdict != nil && c.Verdict.Gated {
					return true
				}
			}
		}
		return false
	}
	slices.SortStableFunc(ms, func(a, b MatrixMetric) int {
		switch ga, gb := gated(a), gated(b); {
		case ga && !gb:
			return -1
		case gb && !ga:
			return 1
		}
		return 0
	})
	return ms
}

// find returns r's verdict of a scenario's metric at a percentile, or nil.
func (r *Report) find(scenario, metric, quantile string) *stats.Verdict {
	for _, s := range r.Scenarios {
		if s.Name != scenario {
			continue
		}
		for i := range s.Verdicts {
			if v := &s.Verdicts[i]; v.Metric == metric && v.Quantile == quantile {
				return v
			}
		}
	}
	return nil
}

// cellOf is one target's percentile with its own 95% interval
// (stats.PercentileOf) and each trial's value.
func cellOf(m *result.Metric, metric string, p stats.Percentile, resamples int) MatrixCell {
	c := MatrixCell{Present: true}
	for _, h := range TrialHistograms(m) {
		c.Trials = append(c.Trials, p.Of(h))
	}
	c.Value, c.Lo, c.Hi = stats.PercentileOf(TrialHistograms(m), metric, p, resamples)
	return c
}

// noEvents reports whether no target has an event of the metric.
func noEvents(targets []MatrixTarget, scenario, metric string) bool {
	for _, t := range targets {
		if s := t.Result.Find(scenario); s != nil && s.Metrics[metric] != nil && s.Metrics[metric].Merged().Count() > 0 {
			return false
		}
	}
	return true
}

// Tally counts the gated verdicts of every pair.
func (m *Matrix) Tally() Counts {
	var c Counts
	for _, r := range m.Pairs {
		t := r.Tally()
		c.Gated += t.Gated
		c.Regressions += t.Regressions
		c.Improvements += t.Improvements
		c.Inconclusive += t.Inconclusive
	}
	return c
}

// Failed reports whether any target regressed against the reference (or,
// with strict, any verdict is inconclusive).
func (m *Matrix) Failed(strict bool) bool {
	for _, r := range m.Pairs {
		if r.Failed(strict) {
			return true
		}
	}
	return false
}

// Decided reports whether every gated test of every pair is decided (see
// Report.Decided).
func (m *Matrix) Decided() bool {
	for _, r := range m.Pairs {
		if !r.Decided() {
			return false
		}
	}
	return true
}

// Stopping says whether a sequential matrix run stops after this look (see
// Report.Stopping); its tests are those of every pair.
func (m *Matrix) Stopping(budgetSpent bool) Stopping {
	return stopping(m.Pairs, budgetSpent)
}

// Scenario returns r's report of the named scenario, or nil.
func (r *Report) Scenario(name string) *ScenarioReport {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// Differing is one recorded respect in which the targets of a matrix
// differ, with each target's value ("-" where one lacks it).
type Differing struct {
	What   string
	Values []string // in Matrix.Targets order
	// Digest says the values are whole digests (see Difference.Digest).
	Digest bool
}

// Differing lists what the targets' Results record differently about what
// was measured (respects), in the order first recorded; nothing when a
// Result is not at hand.
func (m *Matrix) Differing() []Differing {
	var rs []*result.Result
	for _, t := range m.Targets {
		if t.Result == nil {
			return nil
		}
		rs = append(rs, t.Result)
	}
	return differing(rs)
}
