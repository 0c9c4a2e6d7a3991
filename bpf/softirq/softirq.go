// Package softirq is the softirq tracer, in the manner of bcc's softirqs:
// per vector, how long a raised softirq waits to run
// (softirq.<vector>.latency, softirq_raise to softirq_entry) and how long it
// runs (softirq.<vector>.duration, softirq_entry to softirq_exit). Vectors
// are named as the kernel names them (Vectors).
//
// Softirqs belong to no task, so the workload's task filter does not apply:
// they are counted on every CPU, or on Options.CPUs only, for the reasons
// the irq tracer gives (bpf/irq).
//
// A vector raised again before it ran counts one latency, from its first
// raise: the kernel runs it once for both. A run whose raise came before the
// tracer was attached, or before Reset, has a duration and no latency.
package softirq

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

const (
	nVectors = 10 // SOFTIRQ_VECTORS of softirq.h
	// MaxMetrics is the most metrics the tracer counts, two per vector:
	// HIST_MAX_METRICS of bpf/include/hist.bpf.h.
	MaxMetrics = 16
)

// Vectors are the softirq vectors by number, as the kernel names them
// (lower case, as in /proc/softirqs).
var Vectors = []string{"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched", "hrtimer", "rcu"}

// DefaultVectors are the vectors counted when a config names none: the
// network's receive path, block I/O completion, the timer wheel, the
// scheduler's load balancing and RCU callbacks, the softirqs that most
// often delay a task waiting for a packet, a disk or a timer.
var DefaultVectors = []string{"net_rx", "block", "timer", "sched", "rcu"}

// LatencyMetric is the raise-to-entry metric of vector vec.
func LatencyMetric(vec string) string { return "softirq." + vec + ".latency" }

// DurationMetric is the entry-to-exit metric of vector vec.
func DurationMetric(vec string) string { return "softirq." + vec + ".duration" }

// Metrics returns the metrics of vectors in the order the tracer counts
// them: each vector's latency, then its duration.
func Metrics(vectors []string) []string {
	ms := make([]string, 0, 2*len(vectors))
	for _, v := range vectors {
		ms = append(ms, LatencyMetric(v), DurationMetric(v))
	}
	return ms
}

// Options configure the tracer. Every task's softirqs count: TGID,
// Threads and CgroupID are not used (see tracing.TracerOptions.AllTasks).
// The evidence of a slow softirq is the task it interrupted.
type Options struct {
	tracing.TracerOptions
	// Vectors are the vectors to time, names of Vectors.
	Vectors []string
	// CPUs, when not empty, are the only CPUs counted.
	CPUs    []int
	Variant tracing.Variant
}

// Check reports what is wrong with a list of vectors, in words that fit a
// config's error.
func Check(vectors []string) error {
	if len(vectors) == 0 {
		return fmt.Errorf("no vectors to count")
	}
	if len(vectors) > MaxMetrics/2 {
		return fmt.Errorf("%d vectors are %d metrics (two per vector), at most %d: name at most %d vectors", len(vectors), 2*len(vectors), MaxMetrics, MaxMetrics/2)
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

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	if err := Check(opts.Vectors); err != nil {
		return nil, fmt.Errorf("softirq tracer: %w", err)
	}
	if err := tracing.CheckCPUs(opts.CPUs); err != nil {
		return nil, fmt.Errorf("softirq tracer: %w", err)
	}
	var latency, duration [nVectors]uint8
	for i, v := range opts.Vectors {
		nr := slices.Index(Vectors, v)
		latency[nr], duration[nr] = uint8(2*i+1), uint8(2*i+2)
	}
	spec, err := loadSoftirq()
	if err != nil {
		return nil, fmt.Errorf("softirq tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "softirq",
		Metrics:       Metrics(opts.Vectors),
		TracerOptions: opts.AllTasks(),
		Variant:       opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			for _, v := range []struct {
				name  string
				value any
			}{
				{"targ_latency", latency},
				{"targ_duration", duration},
			} {
				if err := s.Variables[v.name].Set(v.value); err != nil {
					return fmt.Errorf("set %s: %w", v.name, err)
				}
			}
			return tracing.SetCPUs(s, opts.CPUs)
		},
	})
}
