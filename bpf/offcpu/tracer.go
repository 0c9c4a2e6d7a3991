package offcpu

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// Tracer is the off-CPU tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "offcpu",
	Description: "switch-out to switch-in, blocked or runnable",
	Metrics:     Metrics,
	Background:  true,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadOffcpu) },
	Probe:   &Config{},
}

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

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.offcpu", nil)
	if err != nil {
		return nil, err
	}
	if len(fs) > 0 {
		return nil, fs[0].KeyAt.Errorf("unknown key %q in tracers.offcpu; the offcpu tracer has no options: write offcpu: {}", fs[0].Key)
	}
	return &Config{}, nil
}
