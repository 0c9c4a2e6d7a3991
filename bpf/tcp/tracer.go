package tcp

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Tracer is the net tracer's registry entry.
var Tracer = tracing.NoOptions[Config](tracing.Kind{
	Name:        "net",
	Description: "TCP: a segment's send to the receiving socket, data's wait for its reader",
	Metrics:     Metrics,
	New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadTcp) },
})

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
