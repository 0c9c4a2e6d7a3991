// Package tracers is the tracer registry: the one list of the tracers a
// scenario may attach. Scenario parsing, metric naming, the runner,
// tailgate list and tailgate doctor loop over it; to add a tracer, write
// its package under bpf/ with a tracing.Kind and add it to All
// (docs/registry.md).
package tracers

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/block"
	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/bpf/irq"
	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/bpf/offcpu"
	"github.com/tailgate-ci/tailgate/bpf/request"
	"github.com/tailgate-ci/tailgate/bpf/sched"
	"github.com/tailgate-ci/tailgate/bpf/softirq"
	"github.com/tailgate-ci/tailgate/bpf/syscalls"
	"github.com/tailgate-ci/tailgate/bpf/tcp"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/ufunc"
)

// All are the tracers, in the order scenarios list their metrics and the
// runner attaches them.
var All = []tracing.Kind{
	syscalls.Tracer,
	sched.Tracer,
	tcp.Tracer,
	request.Tracer,
	offcpu.Tracer,
	irq.Tracer,
	softirq.Tracer,
	block.Tracer,
	ufunc.Tracer,
	kfunc.Tracer,
}

// Lookup returns the tracer named name.
func Lookup(name string) (tracing.Kind, bool) {
	for _, k := range All {
		if k.Name == name {
			return k, true
		}
	}
	return tracing.Kind{}, false
}

// Names returns the tracers' names, in the order of All.
func Names() []string {
	names := make([]string, len(All))
	for i, k := range All {
		names[i] = k.Name
	}
	return names
}

// Interference is the registry entry of the interference log
// (bpf/interfere): no tracer a scenario names, but the log that the
// evidence of every tracer walks.
var Interference = interfere.Tracer

// LoadInterference loads and attaches the interference log (the
// Interference hook of its entry).
func LoadInterference(o tracing.TracerOptions) (tracing.InterferenceLog, error) {
	return Interference.Interference(o)
}

// kinds are the entries of every BPF object a run may load: the
// interference log's, then All.
func kinds() []tracing.Kind { return append([]tracing.Kind{Interference}, All...) }

// Objects returns the BPF objects of every tracer and of the evidence's
// interference log: all that a run may relocate against a kernel's BTF.
func Objects() ([]*ebpf.CollectionSpec, error) {
	var specs []*ebpf.CollectionSpec
	for _, k := range kinds() {
		if k.Objects == nil {
			return nil, fmt.Errorf("tracer %s declares no Objects", k.Name)
		}
		s, err := k.Objects()
		if err != nil {
			return nil, fmt.Errorf("tracer %s: %w", k.Name, err)
		}
		specs = append(specs, s...)
	}
	return specs, nil
}

// OptionalTracepoints are the tracepoints that the tracers and the
// interference log attach to only where the kernel has them
// (Kind.OptionalTracepoints): a cut of a kernel's BTF keeps their
// typedefs.
func OptionalTracepoints() []string {
	var tps []string
	for _, k := range kinds() {
		tps = append(tps, k.OptionalTracepoints...)
	}
	return tps
}
