package tracing

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// MaxCPUs is how many CPUs the targ_cpus mask of a CPU-filtered tracer
// covers (IRQ_MAX_CPUS of bpf/irq/irq.h, SOFTIRQ_MAX_CPUS of
// bpf/softirq/softirq.h).
const MaxCPUs = 1024

// CheckCPUs reports what is wrong with a list of CPUs.
func CheckCPUs(cpus []int) error {
	for i, c := range cpus {
		if c < 0 || c >= MaxCPUs {
			return fmt.Errorf("CPU %d out of range 0-%d", c, MaxCPUs-1)
		}
		if slices.Contains(cpus[:i], c) {
			return fmt.Errorf("CPU %d listed twice", c)
		}
	}
	return nil
}

// SetCPUs sets a CPU-filtered tracer's targ_cpus mask and targ_cpu_filter
// on spec: count only on cpus, or on every CPU when there are none. cpus
// must have passed CheckCPUs.
func SetCPUs(spec *ebpf.CollectionSpec, cpus []int) error {
	var mask [MaxCPUs / 64]uint64
	for _, c := range cpus {
		mask[c/64] |= 1 << (c % 64)
	}
	if err := spec.Variables["targ_cpus"].Set(mask); err != nil {
		return fmt.Errorf("set targ_cpus: %w", err)
	}
	if err := spec.Variables["targ_cpu_filter"].Set(len(cpus) > 0); err != nil {
		return fmt.Errorf("set targ_cpu_filter: %w", err)
	}
	return nil
}

// ParseCPUs reads a tracer config's cpus: a list of CPU numbers.
func ParseCPUs(f config.Field) ([]int, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("cpus must be a list of CPU numbers, e.g. [2, 3], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("cpus is empty; name at least one, or leave cpus out to count every CPU")
	}
	var cpus []int
	for _, v := range items {
		cpu, err := config.Field{Key: "a CPU", Value: v}.Int(0, MaxCPUs-1)
		if err != nil {
			return nil, err
		}
		if slices.Contains(cpus, cpu) {
			return nil, v.Errorf("CPU %d listed twice", cpu)
		}
		cpus = append(cpus, cpu)
	}
	return cpus, nil
}
