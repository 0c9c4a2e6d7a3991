package report

import (
	"slices"
	"sort"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// EvidenceRows is how many of the slowest events a report shows per side.
const EvidenceRows = 3

// Evidence is a regressed metric's slowest events on each side, from the
// trials of the compared Results.
type Evidence struct {
	Scenario, Metric string
	Base, Cand       []result.Event
}

// RegressionEvidence returns the evidence of every metric with a
// regression verdict, when the compared Results carry it.
func (r *Report) RegressionEvidence() []Evidence {
	var out []Evidence
	for _, s := range r.Scenarios {
		var metrics []string
		for _, v := range s.Verdicts {
			if v.Kind == stats.Regression && !slices.Contains(metrics, v.Metric) {
				metrics = append(metrics, v.Metric)
			}
		}
		for _, m := range metrics {
			e := Evidence{
				Scenario: s.Name, Metric: m,
				Base: SlowestEvents(r.BaseResult, s.Name, m, EvidenceRows),
				Cand: SlowestEvents(r.CandResult, s.Name, m, EvidenceRows),
			}
			if len(e.Base)+len(e.Cand) > 0 {
				out = append(out, e)
			}
		}
	}
	return out
}

// SlowestEvents returns the n slowest events of a scenario's metric over
// all trials of res.
func SlowestEvents(res *result.Result, scenario, metric string, n int) []result.Event {
	if res == nil {
		return nil
	}
	var all []result.Event
	for _, s := range res.Scenarios {
		if s.Name != scenario || s.Metrics[metric] == nil {
			continue
		}
		for _, t := range s.Metrics[metric].Trials {
			all = append(all, t.Slowest...)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].LatencyNs > all[j].LatencyNs })
	if len(all) > n {
		all = all[:n]
	}
	return all
}
