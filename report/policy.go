package report

import (
	"encoding/json"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// GatePolicy returns what a scenario's run gates: metric (or "*") to
// percentile to threshold. It is the scenario's resolved Gate, written by
// the runner; for a Result written before that field, the gate block of
// its Definition; when that is empty too, stats.DefaultPolicy. A
// Definition that cannot be read is warned about and the default used.
func GatePolicy(s *result.Scenario) (result.GatePolicy, *stats.Warning) {
	if len(s.Gate) > 0 {
		return s.Gate, nil
	}
	var warn *stats.Warning
	if len(s.Definition) > 0 && string(s.Definition) != "null" {
		// Only the gate block matters here; decoding just it keeps the
		// report free of the scenarios package and its workloads. The
		// field is scenarios.Scenario.Gate's.
		var def struct {
			Gate result.GatePolicy `json:"gate"`
		}
		if err := json.Unmarshal(s.Definition, &def); err != nil {
			warn = &stats.Warning{Kind: WarnDefinitionUnreadable, Scenario: s.Name, Detail: err.Error()}
		} else if len(def.Gate) > 0 {
			return def.Gate, nil
		}
	}
	return stats.DefaultPolicy(), warn
}

// SampleOf is what the statistics see of a metric's trials: each one's
// histogram, round and seed.
func SampleOf(m *result.Metric) *stats.Sample {
	s := &stats.Sample{}
	if m == nil {
		return s
	}
	s.Trials = make([]stats.Trial, len(m.Trials))
	for i, t := range m.Trials {
		s.Trials[i] = stats.Trial{Histogram: t.Histogram, Round: t.Round, Seed: t.Seed}
	}
	return s
}

// TrialHistograms returns the histograms of m's trials, those that have
// one.
func TrialHistograms(m *result.Metric) []*hist.Histogram {
	return SampleOf(m).Histograms()
}
