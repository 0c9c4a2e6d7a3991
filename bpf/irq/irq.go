// Package irq is the hardirq tracer, in the manner of bcc's hardirqs: how
// long hardirq handlers run, irq_handler_entry to irq_handler_exit, by the
// name of their action (irq.hard.<name>, the name /proc/interrupts and
// /proc/irq/N/ show). Softirqs are the softirq tracer's (bpf/softirq).
//
// Interrupts belong to no task, so the workload's task filter does not
// apply: they are counted on every CPU, or on Options.CPUs only. Every CPU
// is the default because the runner pins the workload's threads only once
// the tracers are attached, and to CPUs chosen anew each trial; on the small
// machines CI runs on the workload spans them all anyway. A scenario whose
// workload runs on CPUs it isolated names them (cpus:).
//
// Which actions are counted: those Options.Irqs names, or when a config
// names none the busiest actions of the machine at load that fired since
// boot (Discover), at most MaxMetrics (16). Actions beyond those, actions
// that never fired before the load and actions registered after it are not
// counted; Discover returns the names it left out. To gate on an irq, name it: the discovered set is the machine's, is
// known only where the tracer loads (in a VM, the guest), and may change
// from trial to trial when two actions near the limit trade places.
//
// On kernels that thread their interrupt handlers (PREEMPT_RT, threadirqs)
// irq.hard times the primary handler only, which wakes the handler's thread;
// the thread's work is a task's, seen by the sched tracer.
package irq

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

const (
	nameLen = 32 // IRQ_NAME_LEN of irq.h
	// MaxMetrics is the most actions the tracer counts: HIST_MAX_METRICS
	// of bpf/include/hist.bpf.h.
	MaxMetrics = 16
)

// Metric is the metric of hardirq action name.
func Metric(name string) string { return "irq.hard." + name }

// Metrics returns the metrics of irqs, in order.
func Metrics(irqs []string) []string {
	ms := make([]string, len(irqs))
	for i, name := range irqs {
		ms[i] = Metric(name)
	}
	return ms
}

// Options configure the tracer. Every task's interrupts count: TGID,
// Threads and CgroupID are not used (see tracing.TracerOptions.AllTasks).
// The evidence of a slow action is the task it interrupted.
type Options struct {
	tracing.TracerOptions
	// Irqs are the names of the hardirq actions to time, as /proc/irq/N/
	// names them; see Discover for a machine's busiest.
	Irqs []string
	// CPUs, when not empty, are the only CPUs counted.
	CPUs    []int
	Variant tracing.Variant
}

// Check reports what is wrong with a list of irq action names, in words
// that fit a config's error.
func Check(irqs []string) error {
	if len(irqs) == 0 {
		return fmt.Errorf("no irqs to count")
	}
	if len(irqs) > MaxMetrics {
		return fmt.Errorf("%d irqs, at most %d", len(irqs), MaxMetrics)
	}
	for i, name := range irqs {
		if err := CheckName(name); err != nil {
			return err
		}
		if slices.Contains(irqs[:i], name) {
			return fmt.Errorf("irq %q listed twice", name)
		}
	}
	return nil
}

// CheckName reports what is wrong with a hardirq action name.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty irq name")
	case hasNUL(name):
		return fmt.Errorf("irq name %q holds a NUL byte", name)
	case len(name) > nameLen-1:
		return fmt.Errorf("irq name %q is longer than the %d bytes the tracer compares; write %q", name, nameLen-1, truncName(name))
	}
	return nil
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	if err := Check(opts.Irqs); err != nil {
		return nil, fmt.Errorf("irq tracer: %w", err)
	}
	if err := tracing.CheckCPUs(opts.CPUs); err != nil {
		return nil, fmt.Errorf("irq tracer: %w", err)
	}
	kvs := make([]ebpf.MapKV, len(opts.Irqs))
	for i, name := range opts.Irqs {
		kvs[i] = ebpf.MapKV{Key: nameKey(name), Value: uint32(i)}
	}
	spec, err := loadIrq()
	if err != nil {
		return nil, fmt.Errorf("irq tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "irq",
		Metrics:       Metrics(opts.Irqs),
		TracerOptions: opts.AllTasks(),
		Variant:       opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			s.Maps["irq_metric"].Contents = kvs
			return tracing.SetCPUs(s, opts.CPUs)
		},
	})
}
