package irq

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the hardirq tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "irq",
	Description: "hardirq handler run time per action, on every CPU",
	Metrics:     []string{"irq.hard.<name>"},
	Background:  true,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		cfg := c.(*Config)
		irqs := cfg.Irqs
		if irqs == nil {
			var err error
			if irqs, _, err = Discover(MaxMetrics); err != nil {
				return nil, fmt.Errorf("irq tracer: %w", err)
			}
			if len(irqs) == 0 {
				return nil, fmt.Errorf("irq tracer: this machine lists no irq actions in /proc/interrupts and /proc/irq")
			}
		}
		return New(Options{TracerOptions: o, Irqs: irqs, CPUs: cfg.CPUs})
	},
	// An action that need not exist here: its metric is read all the same.
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadIrq) },
	Probe:   &Config{Irqs: []string{"timer"}},
	Values:  map[string]func() []string{"irqs": machineIrqs},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  irq: {irqs: [virtio1-req.0, ens3-TxRx-0], cpus: [2, 3]}
//
// Without irqs, the busiest actions of the machine the tracer loads on are
// counted (see Discover); without cpus, every CPU.
type Config struct {
	// Irqs are action names, as /proc/irq/N/ names them (metric
	// irq.hard.<name>); nil discovers them at load.
	Irqs []string `json:"irqs,omitempty"`
	CPUs []int    `json:"cpus,omitempty"`
}

// Metrics is irq.hard.<name> for each irq named, in the order written.
// Discovered irqs are known only once the tracer is loaded, where it runs:
// a config that names none declares none, and its metrics are those of
// the loaded tracer (tracing.Tracer.Metrics).
func (c *Config) Metrics() []string { return Metrics(c.Irqs) }

// Primary is every metric: each is an irq's handler run time.
func (c *Config) Primary() []string { return c.Metrics() }

// Canonical returns c with its irqs and CPUs as sorted sets: their order
// changes the order of the metrics, not what is measured.
func (c *Config) Canonical() tracing.Config {
	out := &Config{}
	if c.Irqs != nil {
		out.Irqs = slices.Sorted(slices.Values(c.Irqs))
	}
	if c.CPUs != nil {
		out.CPUs = slices.Sorted(slices.Values(c.CPUs))
	}
	return out
}

// machineIrqs lists this machine's irq actions, busiest first.
func machineIrqs() []string {
	as, err := Actions()
	if err != nil {
		return nil
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	return names
}

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.irq", []string{"irqs", "cpus"})
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, kf := range fs {
		switch kf.Key {
		case "irqs":
			c.Irqs, err = parseIrqs(kf)
		case "cpus":
			c.CPUs, err = tracing.ParseCPUs(kf)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func parseIrqs(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("irqs must be a list of irq action names as /proc/interrupts shows them, e.g. [virtio1-req.0], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("irqs is empty; name at least one, or leave irqs out to count the machine's busiest")
	}
	if len(items) > MaxMetrics {
		return nil, f.Value.Errorf("%d irqs; the tracer times at most %d", len(items), MaxMetrics)
	}
	var names []string
	for _, v := range items {
		if v.Describe() == "a mapping" {
			// [ACPI:Ged] reads as a mapping in a flow list.
			return nil, v.Errorf("irqs must be names, got a mapping; quote a name with a colon: 'ACPI:Ged'")
		}
		name, err := config.Field{Key: "an irq", Value: v}.String()
		if err != nil {
			return nil, err
		}
		if err := CheckName(name); err != nil {
			return nil, v.Errorf("%v", err)
		}
		if slices.Contains(names, name) {
			return nil, v.Errorf("irq %q listed twice", name)
		}
		names = append(names, name)
	}
	return names, nil
}
