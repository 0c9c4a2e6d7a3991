package softirq

import (
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the softirq tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "softirq",
	Description: "softirq raise to run and run time per vector, on every CPU",
	Metrics:     []string{"softirq.<vector>.latency", "softirq.<vector>.duration"},
	Background:  true,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		cfg := c.(*Config)
		return New(Options{TracerOptions: o, Vectors: cfg.Vectors, CPUs: cfg.CPUs})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadSoftirq) },
	Probe:   &Config{Vectors: DefaultVectors},
	Values:  map[string]func() []string{"vectors": func() []string { return Vectors }},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  softirq: {vectors: [net_rx, net_tx], cpus: [2, 3]}
//
// Without vectors it counts DefaultVectors; without cpus, every CPU.
type Config struct {
	Vectors []string `json:"vectors"` // names of Vectors, at most 8
	CPUs    []int    `json:"cpus,omitempty"`
}

// Metrics is each vector's latency and duration, in the order written.
func (c *Config) Metrics() []string { return Metrics(c.Vectors) }

// Primary is each vector's raise-to-run latency: how long the kernel's
// deferred work (a received packet, a completed request) waits.
func (c *Config) Primary() []string {
	ms := make([]string, len(c.Vectors))
	for i, v := range c.Vectors {
		ms[i] = LatencyMetric(v)
	}
	return ms
}

// Canonical returns c with its vectors and CPUs as sorted sets: their
// order changes the order of the metrics, not what is measured.
func (c *Config) Canonical() tracing.Config {
	out := &Config{Vectors: slices.Sorted(slices.Values(c.Vectors))}
	if c.CPUs != nil {
		out.CPUs = slices.Sorted(slices.Values(c.CPUs))
	}
	return out
}

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.softirq", []string{"vectors", "cpus"})
	if err != nil {
		return nil, err
	}
	c := &Config{Vectors: slices.Clone(DefaultVectors)}
	for _, kf := range fs {
		switch kf.Key {
		case "vectors":
			c.Vectors, err = parseVectors(kf)
		case "cpus":
			c.CPUs, err = tracing.ParseCPUs(kf)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func parseVectors(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("vectors must be a list of softirq vectors, e.g. [net_rx, timer], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("vectors is empty; name at least one, or leave vectors out for %s", strings.Join(DefaultVectors, ", "))
	}
	if len(items) > MaxMetrics/2 {
		return nil, f.Value.Errorf("%d vectors; the tracer times at most %d (two metrics each, %d in all)", len(items), MaxMetrics/2, MaxMetrics)
	}
	var vs []string
	for _, v := range items {
		name, ok := v.Name()
		if !ok {
			return nil, v.Errorf("vectors must be names of softirq vectors, got %s", v.Describe())
		}
		if !slices.Contains(Vectors, name) {
			return nil, v.Errorf("unknown softirq vector %q; vectors: %s", name, strings.Join(Vectors, ", "))
		}
		if slices.Contains(vs, name) {
			return nil, v.Errorf("vector %q listed twice", name)
		}
		vs = append(vs, name)
	}
	return vs, nil
}
