package request

import (
	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Tracer is the request tracer's registry entry. It is the default of a
// workload that serves requests (an exec workload with a ready port): a
// scenario of one that names no tracers measures its requests.
var Tracer = func() tracing.Kind {
	k := tracing.NoOptions[Config](tracing.Kind{
		Name:        "request",
		Description: "a server socket's request: the read that brings it in to the write of its answer",
		Metrics:     Metrics,
		// Where the kernel has them: a cut of its BTF keeps them.
		OptionalTracepoints: SocketTracepoints,
		New: func(_ tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
			return New(Options{TracerOptions: o})
		},
		Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadRequest) },
	})
	k.Default = func(w tracing.Workload) tracing.Config {
		if !w.Serves {
			return nil
		}
		return &Config{}
	}
	return k
}()

// Config is the tracer's config in a scenario, which has no options:
//
//	tracers:
//	  request: {}
type Config struct{}

// Metrics is request.server.
func (*Config) Metrics() []string { return Metrics }

// Primary is request.server: the requests are what a server is for.
func (*Config) Primary() []string { return Metrics }
