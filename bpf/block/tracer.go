package block

import (
	"os"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
)

// Tracer is the block I/O tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "block",
	Description: "block I/O insert to issue, issue to completion",
	Metrics:     Metrics,
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o, Devices: c.(*Config).Devices})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadBlock) },
	Probe:   &Config{},
	Values:  map[string]func() []string{"devices": machineDevices},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  block: {devices: [vda]}
//
// Without devices, the workload's requests to every disk are counted.
type Config struct {
	Devices []string `json:"devices,omitempty"` // disks as /sys/block names them
}

// Metrics is block.queue and block.rq, whatever the devices: they are not
// split per device.
func (*Config) Metrics() []string { return Metrics }

// Primary is block.rq: the device's own time. block.queue is mostly the
// I/O scheduler's holding back and is gated only when named.
func (*Config) Primary() []string { return []string{"block.rq"} }

// Canonical returns c with its devices as a sorted set.
func (c *Config) Canonical() tracing.Config {
	out := &Config{}
	if c.Devices != nil {
		out.Devices = slices.Sorted(slices.Values(c.Devices))
	}
	return out
}

// machineDevices lists this machine's disks.
func machineDevices() []string {
	es, err := os.ReadDir("/sys/block")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func parse(f config.Field, _ tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.block", []string{"devices"})
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, kf := range fs {
		if c.Devices, err = parseDevices(kf); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func parseDevices(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("devices must be a list of disks as /sys/block names them, e.g. [vda], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("devices is empty; name at least one, or leave devices out to count every disk")
	}
	if len(items) > MaxDevices {
		return nil, f.Value.Errorf("%d devices; the tracer takes at most %d", len(items), MaxDevices)
	}
	var names []string
	for _, v := range items {
		name, err := config.Field{Key: "a device", Value: v}.String()
		if err != nil {
			return nil, err
		}
		if err := CheckName(name); err != nil {
			return nil, v.Errorf("%v", err)
		}
		if slices.Contains(names, name) {
			return nil, v.Errorf("device %q listed twice", name)
		}
		names = append(names, name)
	}
	return names, nil
}
