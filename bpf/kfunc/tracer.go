package kfunc

import (
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the kernel function tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "kfunc",
	Description: "entry to return of kernel functions (fentry, else kprobe)",
	Metrics:     []string{"kfunc.<function>"},
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o, Functions: c.(*Config).Functions})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadKfunc) },
	Probe:   &Config{Functions: []string{probeFunction}},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  kfunc: {functions: [vfs_read, kernel_clone]}
//
// Whether the kernel has the functions is checked when the tracer loads,
// on the kernel it runs on (a VM's, say), not when the file is read.
type Config struct {
	Functions []string `json:"functions"` // metric kfunc.<function> each
}

// Metrics is kfunc.<function> for each function, in the order written.
func (c *Config) Metrics() []string {
	ms := make([]string, len(c.Functions))
	for i, fn := range c.Functions {
		ms[i] = Metric(fn)
	}
	return ms
}

// Primary is every metric: the functions are what the scenario is about.
func (c *Config) Primary() []string { return c.Metrics() }

// Canonical returns c with its functions sorted: the order changes the
// order of the metrics, not what is measured.
func (c *Config) Canonical() tracing.Config {
	return &Config{Functions: slices.Sorted(slices.Values(c.Functions))}
}

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.kfunc", []string{"functions"})
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, f.KeyAt.Errorf("the kfunc tracer needs functions, e.g. functions: [vfs_read]")
	}
	items, ok, err := fs[0].Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fs[0].Value.Errorf("functions must be a list of kernel function names, e.g. [vfs_read], got %s", fs[0].Value.Describe())
	}
	if len(items) == 0 {
		return nil, fs[0].Value.Errorf("functions is empty; name at least one, e.g. [vfs_read]")
	}
	if len(items) > maxFunctions {
		return nil, items[maxFunctions].Errorf("%d functions; the tracer times at most %d", len(items), maxFunctions)
	}
	c := &Config{}
	for _, v := range items {
		name, ok := v.Name()
		if !ok || !nameRE.MatchString(name) {
			return nil, v.Errorf("functions must be kernel function names such as vfs_read, got %s", v.Describe())
		}
		if slices.Contains(c.Functions, name) {
			return nil, v.Errorf("function %q listed twice", name)
		}
		c.Functions = append(c.Functions, name)
	}
	return c, nil
}
