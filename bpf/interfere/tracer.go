package interfere

import "github.com/tailgate-ci/tailgate/bpf/tracing"

// Tracer is the interference log's registry entry (tracers.Interference):
// no tracer a scenario names, but the log that the evidence of every
// tracer walks.
var Tracer = tracing.Kind{
	Name:                "interfere",
	Description:         "what ran on each CPU, for the evidence of slow events",
	Objects:             Objects,
	OptionalTracepoints: OptionalTracepoints,
	Interference: func(o tracing.TracerOptions) (tracing.InterferenceLog, error) {
		l, err := Load(Options{BTF: o.BTF, KernelTypes: o.KernelTypes, Loaded: o.Loaded, VerifierStats: o.VerifierStats})
		if err != nil {
			return nil, err // not a nil *Log in a non-nil interface
		}
		return l, nil
	},
}
