package sched

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Tracer is the scheduler tracer's registry entry.
var Tracer = tracing.NoOptions[Config](tracing.Kind{
	Name:        "sched",
	Description: "wakeup / new task / preemption to switch-in",
	Metrics:     Metrics,
	Background:  true,
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadSched) },
})

// Config is the tracer's config in a scenario, which has no options yet:
//
//	tracers:
//	  sched: {}
type Config struct{}

// Metrics is every metric of the tracer.
func (*Config) Metrics() []string { return Metrics }

// Primary is sched.runq, the run-queue latency of wakeups.
func (*Config) Primary() []string { return Metrics[:1] }
