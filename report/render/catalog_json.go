package render

import (
	"encoding/json"
	"io"
)

// CatalogSchemaVersion is the schema of WriteCatalogJSON's document
// (docs/catalog.schema.json).
const CatalogSchemaVersion = 1

// CatalogJSON is what tailgate list --format json writes: the Catalog, as
// its text lists it.
type CatalogJSON struct {
	Schema          int                   `json:"schema"`
	Scenarios       []CatalogScenarioJSON `json:"scenarios"`
	Tracers         []CatalogTracerJSON   `json:"tracers"`
	WorkloadMetrics []CatalogMetricJSON   `json:"workload_metrics"`
}

// CatalogScenarioJSON is a built-in scenario.
type CatalogScenarioJSON struct {
	Name        string   `json:"name"`
	Workload    string   `json:"workload"`
	Description string   `json:"description"`
	Tracers     []string `json:"tracers"`
	Metrics     []string `json:"metrics"`
	// Gate is the scenario's gate policy: metric, then percentile, to the
	// relative threshold (0.1 is 10%).
	Gate map[string]map[string]float64 `json:"gate"`
}

// CatalogTracerJSON is a tracer of the registry.
type CatalogTracerJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Metrics     []string `json:"metrics"`
	ValueKeys   []string `json:"value_keys"`
}

// CatalogMetricJSON is a metric a workload kind measures itself.
type CatalogMetricJSON struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// JSON is c's document; lists are empty rather than null.
func (c *Catalog) JSON() CatalogJSON {
	out := CatalogJSON{Schema: CatalogSchemaVersion, Scenarios: []CatalogScenarioJSON{}, Tracers: []CatalogTracerJSON{}, WorkloadMetrics: []CatalogMetricJSON{}}
	for _, s := range c.Scenarios {
		gate := map[string]map[string]float64{}
		for m, ps := range s.Gate {
			gate[m] = map[string]float64{}
			for p, v := range ps {
				gate[m][p] = v
			}
		}
		out.Scenarios = append(out.Scenarios, CatalogScenarioJSON{
			Name: s.Name, Workload: s.Workload, Description: s.Description,
			Tracers: nonNil(s.Tracers), Metrics: nonNil(s.Metrics), Gate: gate,
		})
	}
	for _, k := range c.Tracers {
		out.Tracers = append(out.Tracers, CatalogTracerJSON{Name: k.Name, Description: k.Description, Metrics: nonNil(k.Metrics), ValueKeys: nonNil(k.ValueKeys)})
	}
	for _, m := range c.WorkloadMetrics {
		out.WorkloadMetrics = append(out.WorkloadMetrics, CatalogMetricJSON{Kind: m.Kind, Name: m.Name, Description: m.Description})
	}
	return out
}

// WriteCatalogJSON writes c's document (Catalog.JSON) as indented JSON.
func WriteCatalogJSON(w io.Writer, c *Catalog) error { return writeIndentedJSON(w, c.JSON()) }

func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
