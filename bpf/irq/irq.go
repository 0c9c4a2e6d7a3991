// Package irq is the interrupt tracer, in the manner of bcc's hardirqs and
// softirqs: how long hardirq handlers run, by the name of their action
// (irq.hard.<name>, irq_handler_entry to irq_handler_exit), and per softirq
// vector how long a raised softirq waits to run (softirq.<vector>.latency,
// softirq_raise to softirq_entry) and how long it runs
// (softirq.<vector>.duration, softirq_entry to softirq_exit).
//
// Interrupts belong to no task, so the workload's task filter does not
// apply: they are counted on every CPU, or on Options.CPUs only. Every CPU
// is the default because the runner pins the workload's threads only once
// the tracers are attached, and to CPUs chosen anew each trial; on the small
// machines CI runs on the workload spans them all anyway. A scenario whose
// workload runs on CPUs it isolated names them (cpus:).
//
// Which hardirqs are counted: the actions Options.Irqs names, or when a
// config names none the busiest actions of the machine at load (Discover),
// as many as the metric limit leaves room for beside the vectors' metrics
// (MaxMetrics − 2 × vectors: 8 with the default vectors). Actions beyond
// that, and actions registered after the tracer was loaded, are not counted;
// Discover returns the names it left out. To gate on an irq, name it: the
// discovered set is the machine's and may change from trial to trial when
// two actions near the limit trade places.
//
// On kernels that thread their interrupt handlers (PREEMPT_RT, threadirqs)
// irq.hard times the primary handler only, which wakes the handler's thread;
// the thread's work is a task's, seen by the sched tracer.
package irq

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

const (
	nameLen  = 32   // IRQ_NAME_LEN of irq.h
	maxCPUs  = 1024 // IRQ_MAX_CPUS of irq.h
	nVectors = 10   // IRQ_VECTORS of irq.h
	// MaxMetrics is the most metrics the tracer counts: HIST_MAX_METRICS
	// of bpf/include/hist.bpf.h.
	MaxMetrics = 16
)

// Vectors are the softirq vectors by number, as the kernel names them
// (lower case, as in /proc/softirqs).
var Vectors = []string{"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched", "hrtimer", "rcu"}

// DefaultVectors are the vectors counted when a config names none: the
// network's receive path, the timer wheel, the scheduler's load balancing
// and RCU callbacks, the softirqs that most often delay a task that waits
// for a packet or a timer.
var DefaultVectors = []string{"net_rx", "timer", "sched", "rcu"}

// HardMetric is the metric of hardirq action name.
func HardMetric(name string) string { return "irq.hard." + name }

// LatencyMetric is the raise-to-entry metric of softirq vector vec.
func LatencyMetric(vec string) string { return "softirq." + vec + ".latency" }

// DurationMetric is the entry-to-exit metric of softirq vector vec.
func DurationMetric(vec string) string { return "softirq." + vec + ".duration" }

// Metrics returns the metrics of irqs and vectors in the order the tracer
// counts them: each irq's, then each vector's latency and duration.
func Metrics(irqs, vectors []string) []string {
	ms := make([]string, 0, len(irqs)+2*len(vectors))
	for _, name := range irqs {
		ms = append(ms, HardMetric(name))
	}
	for _, v := range vectors {
		ms = append(ms, LatencyMetric(v), DurationMetric(v))
	}
	return ms
}

// HardSlots returns how many hardirq actions fit beside vectors'
// metrics.
func HardSlots(vectors []string) int { return max(MaxMetrics-2*len(vectors), 0) }

// Options configure the tracer.
type Options struct {
	// Irqs are the names of the hardirq actions to time, as /proc/irq/N/
	// names them; see Discover for a machine's busiest.
	Irqs []string
	// Vectors are the softirq vectors to time, names of Vectors.
	Vectors []string
	// CPUs, when not empty, are the only CPUs counted.
	CPUs    []int
	Variant tracing.Variant
	BTF     *btf.Cache // shared decoded kernel BTF; nil decodes it anew
	// Evidence keeps each metric's slowest events per trial, with the task
	// each interrupted (see tracing.Options.Evidence); 0 is off.
	Evidence int
}

// Check reports what is wrong with a choice of irqs and vectors, in words
// that fit a config's error.
func Check(irqs, vectors []string) error {
	if len(irqs) == 0 && len(vectors) == 0 {
		return fmt.Errorf("no irqs and no vectors: nothing to count")
	}
	if n := len(irqs) + 2*len(vectors); n > MaxMetrics {
		return fmt.Errorf("%d irqs and %d vectors are %d metrics (one per irq, two per vector), at most %d", len(irqs), len(vectors), n, MaxMetrics)
	}
	for i, name := range irqs {
		if err := CheckIrq(name); err != nil {
			return err
		}
		if slices.Contains(irqs[:i], name) {
			return fmt.Errorf("irq %q listed twice", name)
		}
	}
	for i, v := range vectors {
		if !slices.Contains(Vectors, v) {
			return fmt.Errorf("unknown softirq vector %q; vectors: %s", v, strings.Join(Vectors, ", "))
		}
		if slices.Contains(vectors[:i], v) {
			return fmt.Errorf("vector %q listed twice", v)
		}
	}
	return nil
}

// CheckIrq reports what is wrong with a hardirq action name.
func CheckIrq(name string) error {
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
	if err := Check(opts.Irqs, opts.Vectors); err != nil {
		return nil, fmt.Errorf("irq tracer: %w", err)
	}
	var cpus [maxCPUs / 64]uint64
	for _, c := range opts.CPUs {
		if c < 0 || c >= maxCPUs {
			return nil, fmt.Errorf("irq tracer: CPU %d out of range 0-%d", c, maxCPUs-1)
		}
		cpus[c/64] |= 1 << (c % 64)
	}
	var latency, duration [nVectors]uint8
	for i, v := range opts.Vectors {
		nr := slices.Index(Vectors, v)
		m := len(opts.Irqs) + 2*i
		latency[nr], duration[nr] = uint8(m+1), uint8(m+2)
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
		Name:     "irq",
		Metrics:  Metrics(opts.Irqs, opts.Vectors),
		Variant:  opts.Variant,
		BTF:      opts.BTF,
		Evidence: opts.Evidence,
		Configure: func(s *ebpf.CollectionSpec) error {
			s.Maps["irq_metric"].Contents = kvs
			for name, v := range map[string]any{
				"targ_vec_latency":  latency,
				"targ_vec_duration": duration,
				"targ_cpus":         cpus,
				"targ_cpu_filter":   len(opts.CPUs) > 0,
			} {
				if err := s.Variables[name].Set(v); err != nil {
					return fmt.Errorf("set %s: %w", name, err)
				}
			}
			return nil
		},
	})
}
