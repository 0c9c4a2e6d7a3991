package report

import (
	"maps"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// bandWarnings say, for scenario, the nuisance band of each gated test of
// seeded boots in virtual time (how far it moves across seeds alone), so
// that every such report says it, whether or not its threshold is inside.
func bandWarnings(scenario string, vs []stats.Verdict) []stats.Warning {
	var out []stats.Warning
	for _, v := range vs {
		if !v.Gated || v.Band == nil || !v.Band.Known() {
			continue
		}
		out = append(out, stats.Warning{Kind: stats.WarnNuisanceBand, Scenario: scenario, Metric: v.Metric, Percentile: v.Quantile, BaseCount: v.Band.Seeds, Band: v.Band.Fraction()})
	}
	return out
}

// BandLine is one gated test's nuisance band across the seeded boots of
// runs of one target (a calibration in virtual time), beside its
// threshold.
type BandLine struct {
	Scenario, Metric, Percentile string
	Threshold                    float64
	Band                         stats.Band
}

// Unreachable says the threshold lies inside the band: a gate never
// decides the test.
func (l BandLine) Unreachable() bool { return l.Band.Covers(l.Threshold) }

// SeedBands measures, across every seeded boot of runs (one target, the
// runs' seeds apart), the nuisance band of each gated test of the first
// run's scenarios at the thresholds cli overrides; nil when a trial is
// not seeded (real time).
func SeedBands(runs []*result.Result, cli []stats.Threshold) []BandLine {
	if len(runs) == 0 {
		return nil
	}
	var out []BandLine
	for _, s := range runs[0].Scenarios {
		gate, _ := GatePolicy(&s)
		names := slices.Sorted(maps.Keys(s.Metrics))
		for _, name := range names {
			for _, p := range stats.PercentilesFor(gate, cli) {
				t, gated := stats.ResolveThreshold(name, p.Name, gate, cli)
				if !gated {
					continue
				}
				var qs []float64
				for _, r := range runs {
					sc := r.Find(s.Name)
					if sc == nil {
						continue
					}
					q, ok := stats.SeededQuantiles(SampleOf(sc.Metrics[name]), p.Q)
					if !ok {
						return nil
					}
					qs = append(qs, q...)
				}
				out = append(out, BandLine{Scenario: s.Name, Metric: name, Percentile: p.Name, Threshold: t, Band: stats.NuisanceBand(qs)})
			}
		}
	}
	return out
}
