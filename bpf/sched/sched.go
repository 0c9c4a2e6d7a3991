// Package sched is the scheduler latency tracer, in the manner of runqlat:
// run-queue latency of the workload's tasks from wakeup to switch-in
// (sched.runq), from preemption to switch-in (sched.runq_preempted), and of a
// new task to its first run (sched.wakeup_new).
package sched

import (
	"fmt"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// sched.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{"sched.runq", "sched.runq_preempted", "sched.wakeup_new"}

// Options configure the tracer.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	spec, err := loadSched()
	if err != nil {
		return nil, fmt.Errorf("sched tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "sched",
		Metrics:       Metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
	})
}
