package engine

import (
	"maps"
	"slices"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Catalog gathers what tailgate list shows from the registries: the
// built-in scenarios, the tracers, the workload kinds' own metrics.
func Catalog() *render.Catalog {
	var c render.Catalog
	for _, s := range scenarios.Builtin() {
		cs := render.CatalogScenario{
			Name: s.Name, Workload: s.Workload.Kind, Description: s.Description,
			Metrics: scenarios.Metrics(s), Gate: scenarios.GatePolicy(s),
		}
		for _, k := range tracers.All {
			if s.Tracers[k.Name] != nil {
				cs.Tracers = append(cs.Tracers, k.Name)
			}
		}
		c.Scenarios = append(c.Scenarios, cs)
	}
	for _, k := range tracers.All {
		c.Tracers = append(c.Tracers, render.CatalogTracer{
			Name: k.Name, Description: k.Description, Metrics: k.Metrics,
			ValueKeys: slices.Sorted(maps.Keys(k.Values)),
		})
	}
	for _, k := range scenarios.WorkloadKinds() {
		for _, m := range k.Metrics {
			c.WorkloadMetrics = append(c.WorkloadMetrics, render.CatalogMetric{Kind: k.Name, Name: m.Name, Description: m.Description})
		}
	}
	return &c
}

// ValueList is the values a tracer's config key takes.
type ValueList struct {
	Tracer string
	Values func() []string
}

// ValueLists returns, by config key, what tailgate list KEY prints: the
// values the tracers declare (tracing.Kind.Values).
func ValueLists() map[string]ValueList {
	lists := map[string]ValueList{}
	for _, k := range tracers.All {
		for key, values := range k.Values {
			lists[key] = ValueList{Tracer: k.Name, Values: values}
		}
	}
	return lists
}
