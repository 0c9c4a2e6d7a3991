package tcp

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// Tracer is the net tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "net",
	Description: "TCP: a segment's send to the receiving socket, data's wait for its reader",
	Metrics:     Metrics,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadTcp) },
	Probe:   &Config{},
}

// Config is the tracer's config in a scenario, which has no options:
//
//	tracers:
//	  net: {}
type Config struct{}

// Metrics is every metric of the tracer: net.tcp.deliver and net.tcp.rcvq.
func (*Config) Metrics() []string { return Metrics }

// Primary is net.tcp.deliver, the network stack's share of a message's
// latency; net.tcp.rcvq is mostly the reader's scheduling, which the sched
// tracer measures too.
func (*Config) Primary() []string { return Metrics[:1] }

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.net", nil)
	if err != nil {
		return nil, err
	}
	if len(fs) > 0 {
		return nil, fs[0].KeyAt.Errorf("unknown key %q in tracers.net; the net tracer has no options: write net: {}", fs[0].Key)
	}
	return &Config{}, nil
}
