// Package offcpu is the off-CPU tracer, in the manner of offcputime: how
// long the workload's tasks are off the CPU, from a task's switch-out to
// its next switch-in (sched_switch), split by the task's state at
// switch-out: offcpu.blocked when it waits for something (its state was not
// TASK_RUNNING: a sleep, a lock, I/O), offcpu.runnable when it waits for a
// CPU (it was preempted, or yielded).
//
// The evidence of each slow event has the kernel stack the task left the
// CPU with, which names what it waited for (hrtimer_nanosleep, futex_wait,
// pipe_read, ...), and as the task that ran instead the one switched out
// for it at its return. Exiting tasks are not timed.
//
// The tp_btf variant reads the stack at switch-in from the task, which has
// not run since it left and still holds it, and only for events above the
// evidence floor: evidence costs it about 7 ns per switch (measured here on
// a pipe ping-pong: 94 ns per program run against 87 without). The kernel
// leaves the scheduler's own functions (those marked __sched: schedule,
// do_nanosleep, schedule_timeout, mutex_lock's slow path) out of a sleeping
// task's stack, so such a stack starts at their caller. The raw_tp variant
// has no trusted task pointer to read it with: it takes the stack at every
// switch-out of a traced task while evidence is on, complete, with the
// tracer's own frames on top, at about 500 ns per switch-out (633 ns per
// run against 127).
package offcpu

import (
	"fmt"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// offcpu.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{"offcpu.blocked", "offcpu.runnable"}

// Options configure the tracer. With Evidence on, the raw_tp variant
// takes a kernel stack at every switch-out of a traced task.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	spec, err := loadOffcpu()
	if err != nil {
		return nil, fmt.Errorf("offcpu tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "offcpu",
		Metrics:       Metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
	})
}
