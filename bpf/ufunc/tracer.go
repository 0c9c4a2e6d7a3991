package ufunc

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the user function tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "ufunc",
	Description: "entry to return of functions of a binary or library (uprobes)",
	Metrics:     []string{"ufunc.<binary>:<symbol>"},
	HostOnly:    "it probes a binary of this host, and a VM's guest holds none but tailgate",
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		cc := c.(*Config)
		return New(Options{TracerOptions: o, Binary: cc.Binary, Symbols: cc.Symbols})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadUfunc) },
	// The C library is the one non-Go binary a host is sure to have.
	Probe:    &Config{Binary: "libc.so.6", Symbols: []string{"getpid"}},
	Binaries: func(c tracing.Config) []string { return []string{c.(*Config).Binary} },
	MoveBinaries: func(c tracing.Config, move func(string) string) tracing.Config {
		cc := *c.(*Config)
		cc.Binary = move(cc.Binary)
		return &cc
	},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  ufunc:
//	    binary: ./server        # a path (relative to the scenario file), a library's name (libc.so.6) or a command in $PATH
//	    symbols: [handle_request]
//
// The binary is looked at when the tracer loads, not when the file is
// read: a scenario's setup may build it.
type Config struct {
	Binary  string   `json:"binary"`
	Symbols []string `json:"symbols"` // metric ufunc.<base name of binary>:<symbol> each
}

// Metrics is ufunc.<binary>:<symbol> for each symbol, in the order written.
func (c *Config) Metrics() []string {
	ms := make([]string, len(c.Symbols))
	for i, s := range c.Symbols {
		ms[i] = Metric(c.Binary, s)
	}
	return ms
}

// Primary is every metric: the functions are what the scenario is about.
func (c *Config) Primary() []string { return c.Metrics() }

// Canonical returns c with its symbols sorted (the order changes the
// order of the metrics, not what is measured) and the binary's base name,
// as the metrics name it: where a checkout is differs between machines.
func (c *Config) Canonical() tracing.Config {
	return &Config{Binary: filepath.Base(c.Binary), Symbols: slices.Sorted(slices.Values(c.Symbols))}
}

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.ufunc", []string{"binary", "symbols"})
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, sf := range fs {
		switch sf.Key {
		case "binary":
			if c.Binary, err = sf.String(); err != nil {
				return nil, err
			}
			if c.Binary == "" {
				return nil, sf.Value.Errorf("binary is empty; give the path of an executable or shared library")
			}
			c.Binary = relativeTo(sf.Value.Source(), c.Binary)
		case "symbols":
			if c.Symbols, err = parseSymbols(sf); err != nil {
				return nil, err
			}
		}
	}
	if c.Binary == "" {
		return nil, f.KeyAt.Errorf("the ufunc tracer needs binary, the executable or library whose functions to time, e.g. binary: ./server")
	}
	if c.Symbols == nil {
		return nil, f.KeyAt.Errorf("the ufunc tracer needs symbols, the functions to time, e.g. symbols: [handle_request]")
	}
	return c, nil
}

// relativeTo resolves a relative path (one with a slash: ./server) against
// the directory of the scenario file source, as the exec workload's dir
// is; a name (libc.so.6, sh) is looked up when the tracer loads (Resolve),
// and a built-in scenario has no directory.
func relativeTo(source, binary string) string {
	if filepath.IsAbs(binary) || !strings.Contains(binary, "/") || source == "" || strings.HasPrefix(source, "builtin:") {
		return binary
	}
	return filepath.Join(filepath.Dir(source), binary)
}

func parseSymbols(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("symbols must be a list of function names, e.g. [handle_request], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("symbols is empty; name at least one function")
	}
	if len(items) > maxSymbols {
		return nil, items[maxSymbols].Errorf("%d symbols; the tracer times at most %d", len(items), maxSymbols)
	}
	var syms []string
	for _, v := range items {
		name, ok := v.Name()
		if !ok || name == "" || strings.ContainsAny(name, " \t\n:") {
			return nil, v.Errorf("symbols must be function names such as handle_request, got %s", v.Describe())
		}
		if slices.Contains(syms, name) {
			return nil, v.Errorf("symbol %q listed twice", name)
		}
		syms = append(syms, name)
	}
	return syms, nil
}
