package baseline

import (
	"encoding/json"
	"io"
	"slices"
)

// SummarySchemaVersion is the schema of WriteSummaryJSON's document
// (docs/baselines.schema.json).
const SummarySchemaVersion = 1

// Summary is what tailgate baseline show --format json writes: each
// stored baseline's scenario, target and metrics.
type Summary struct {
	Schema    int            `json:"schema"`
	Baselines []EntrySummary `json:"baselines"`
}

// EntrySummary is one stored baseline.
type EntrySummary struct {
	Scenario      string          `json:"scenario"`
	Target        string          `json:"target"`
	KernelRelease string          `json:"kernel_release"`
	Trials        int             `json:"trials"`
	File          string          `json:"file"`
	Metrics       []MetricSummary `json:"metrics"`
}

// MetricSummary is a metric of a stored baseline, all trials merged.
type MetricSummary struct {
	Name   string `json:"name"`
	Events uint64 `json:"events"`
	// P99Ns is null for a metric without events.
	P99Ns *float64 `json:"p99_ns"`
}

// Summarize is the Summary of entries, metrics by name.
func Summarize(entries []Entry) Summary {
	out := Summary{Schema: SummarySchemaVersion, Baselines: []EntrySummary{}}
	for i := range entries {
		e := &entries[i]
		s := e.Scenario()
		es := EntrySummary{Target: e.Result.Target.Name, KernelRelease: e.Result.Environment.KernelRelease, File: e.Path, Metrics: []MetricSummary{}}
		if s != nil {
			es.Scenario, es.Trials = s.Name, s.Trials
			var names []string
			for name := range s.Metrics {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				if m := s.Metrics[name]; m != nil {
					h := m.Merged()
					ms := MetricSummary{Name: name, Events: h.Count()}
					if h.Count() > 0 {
						p99 := h.Quantile(0.99)
						ms.P99Ns = &p99
					}
					es.Metrics = append(es.Metrics, ms)
				}
			}
		}
		out.Baselines = append(out.Baselines, es)
	}
	return out
}

// WriteSummaryJSON writes the Summary of entries as indented JSON.
func WriteSummaryJSON(w io.Writer, entries []Entry) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarize(entries))
}
