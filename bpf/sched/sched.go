// Package sched is the scheduler latency tracer, in the manner of runqlat:
// run-queue latency of the workload's tasks from wakeup to switch-in
// (sched.runq), from preemption to switch-in (sched.runq_preempted), and of a
// new task to its first run (sched.wakeup_new).
package sched

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// sched.h.
var Metrics = []string{"sched.runq", "sched.runq_preempted", "sched.wakeup_new"}

// Options configure the tracer.
type Options struct {
	TGID        uint32
	Variant     tracing.Variant
	BTF         *btf.Cache // shared decoded kernel BTF; nil decodes it anew
	KernelTypes *btf.Spec  // replace the kernel's BTF for CO-RE (tracing.Options.KernelTypes)
	// Threads counts only the threads added with AddThread (see
	// tracing.Options.Threads).
	Threads bool
	// CgroupID, when not 0, is the cgroup v2 group whose tasks are
	// counted (see tracing.TracerOptions.CgroupID).
	CgroupID uint64
	// Evidence keeps each metric's slowest events per trial (see
	// tracing.Options.Evidence); 0 is off.
	Evidence int
	// Interference is bpf/interfere's log, for the evidence (see
	// tracing.Options.Interference); nil is none.
	Interference *ebpf.Map
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	spec, err := loadSched()
	if err != nil {
		return nil, fmt.Errorf("sched tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:         "sched",
		Metrics:      Metrics,
		TGID:         opts.TGID,
		Variant:      opts.Variant,
		BTF:          opts.BTF,
		KernelTypes:  opts.KernelTypes,
		Threads:      opts.Threads,
		CgroupID:     opts.CgroupID,
		Evidence:     opts.Evidence,
		Interference: opts.Interference,
	})
}
