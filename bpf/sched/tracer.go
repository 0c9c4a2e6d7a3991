package sched

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// Tracer is the scheduler tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "sched",
	Description: "wakeup / new task / preemption to switch-in",
	Metrics:     Metrics,
	Background:  true,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadSched) },
	Probe:   &Config{},
}

// Config is the tracer's config in a scenario, which has no options yet:
//
//	tracers:
//	  sched: {}
type Config struct{}

// Metrics is every metric of the tracer.
func (*Config) Metrics() []string { return Metrics }

// Primary is sched.runq, the run-queue latency of wakeups.
func (*Config) Primary() []string { return Metrics[:1] }

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.sched", nil)
	if err != nil {
		return nil, err
	}
	if len(fs) > 0 {
		return nil, fs[0].KeyAt.Errorf("unknown key %q in tracers.sched; the sched tracer has no options: write sched: {}", fs[0].Key)
	}
	return &Config{}, nil
}
