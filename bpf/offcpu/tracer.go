package offcpu

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Tracer is the off-CPU tracer's registry entry.
var Tracer = tracing.NoOptions[Config](tracing.Kind{
	Name:        "offcpu",
	Description: "switch-out to switch-in, blocked or runnable",
	Metrics:     Metrics,
	Background:  true,
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadOffcpu) },
})

// Config is the tracer's config in a scenario, which has no options:
//
//	tracers:
//	  offcpu: {}
type Config struct{}

// Metrics is every metric of the tracer: offcpu.blocked and
// offcpu.runnable.
func (*Config) Metrics() []string { return Metrics }

// Primary is both metrics: the time the workload's tasks wait for what
// they blocked on, and for a CPU.
func (*Config) Primary() []string { return Metrics }
