// Package request is the request tracer: for the workload's server
// sockets, each request's time from the read that brings it in to the
// write of its answer on the same socket, as metric request.server. It
// attaches to one syscall tracepoint only (raw_syscalls sys_exit, where
// a syscall's registers still hold its number and arguments), so it
// measures a program in any language, Go included,
// without naming a function of it.
package request

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
)

// MetricServer is the tracer's one metric.
const MetricServer = "request.server"

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// request.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{MetricServer}

// nrMax must match REQUEST_NR_MAX in request.h.
const nrMax = 512

// ops are the syscalls the tracer follows, by what they do to a socket's
// requests (the OP_ values of request.h).
var ops = map[string]uint8{
	"read": 1, "readv": 1, "recvfrom": 1, "recvmsg": 1,
	"write": 2, "writev": 2, "sendto": 2, "sendmsg": 2,
	"accept": 3, "accept4": 3,
	"connect": 4,
	"close":   5,
	"dup2":    6, "dup3": 6,
}

// Options configure the tracer. TGID, Threads and CgroupID choose the
// tasks whose sockets are counted.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	var table [nrMax]uint8
	for name, op := range ops {
		nr, ok := sysnum.Numbers[name]
		if !ok || nr < 0 || nr >= nrMax {
			return nil, fmt.Errorf("request tracer: no syscall number for %s", name)
		}
		table[nr] = op
	}
	spec, err := loadRequest()
	if err != nil {
		return nil, fmt.Errorf("request tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "request",
		Metrics:       Metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			return s.Variables["targ_op"].Set(table)
		},
	})
}
