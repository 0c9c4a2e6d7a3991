package request

import (
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the request tracer's registry entry. It is the default of a
// workload that serves requests (an exec workload with a ready port): a
// scenario of one that names no tracers measures its requests.
var Tracer = func() tracing.Kind {
	k := tracing.Kind{
		Name:        "request",
		Description: "a server socket's request: the read that brings it in to the write of its answer",
		Metrics:     Metrics,
		Parse:       parse,
		Decode:      tracing.DecodeJSON[Config],
		// Where the kernel has them: a cut of its BTF keeps them.
		OptionalTracepoints: append(slices.Clone(SocketTracepoints), QueueTracepoint),
		New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
			return New(Options{TracerOptions: o, Queue: c.(*Config).Queue})
		},
		Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadRequest) },
		Probe:   &Config{},
	}
	k.Default = func(w tracing.Workload) tracing.Config {
		if !w.Serves {
			return nil
		}
		return &Config{}
	}
	return k
}()

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  request: {}              # request.server
//	  request: {queue: true}   # and request.queue (Linux 6.4 and later)
type Config struct {
	// Queue adds request.queue: a request's data's wait before the read
	// that opens it.
	Queue bool `json:"queue,omitempty"`
}

// Metrics is request.server, and request.queue when asked.
func (c *Config) Metrics() []string {
	if c.Queue {
		return Metrics
	}
	return Metrics[:1]
}

// Primary is request.server: the requests are what a server is for.
func (*Config) Primary() []string { return Metrics[:1] }

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.request", []string{"queue"})
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, sf := range fs {
		if c.Queue, err = sf.Bool(); err != nil {
			return nil, err
		}
	}
	return c, nil
}
