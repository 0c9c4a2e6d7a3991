// Package syscalls is the syscall latency tracer: for each configured
// syscall, the time from raw_syscalls:sys_enter to sys_exit of the
// workload's tasks, as metric syscall.<name>.
package syscalls

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
)

// nrMax must match SYSCALL_NR_MAX in syscall.h.
const nrMax = 512

// Number returns the x86_64 number of a syscall name.
func Number(name string) (int, bool) {
	n, ok := sysnum.Numbers[name]
	return n, ok
}

// Names returns the syscalls that can be traced, sorted.
func Names() []string { return sysnum.Names() }

// Metric returns the metric name of a syscall.
func Metric(name string) string { return "syscall." + name }

// Options configure the tracer.
type Options struct {
	tracing.TracerOptions
	Syscalls []string // names, see Names
	Variant  tracing.Variant
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	if len(opts.Syscalls) == 0 {
		return nil, fmt.Errorf("syscall tracer: no syscalls configured")
	}
	var table [nrMax]uint8
	var metrics []string
	for i, name := range opts.Syscalls {
		nr, ok := sysnum.Numbers[name]
		if !ok {
			return nil, fmt.Errorf("syscall tracer: unknown syscall %q (tailgate list syscalls shows them all)", name)
		}
		if nr < 0 || nr >= nrMax {
			return nil, fmt.Errorf("syscall tracer: %s is syscall %d, beyond the %d the tracer's table holds", name, nr, nrMax)
		}
		if slices.Contains(opts.Syscalls[:i], name) {
			return nil, fmt.Errorf("syscall tracer: %q listed twice", name)
		}
		table[nr] = uint8(i + 1)
		metrics = append(metrics, Metric(name))
	}
	spec, err := loadSyscall()
	if err != nil {
		return nil, fmt.Errorf("syscall tracer: %w", err)
	}
	return tracing.Load(spec, tracing.Options{
		Name:          "syscall",
		Metrics:       metrics,
		TracerOptions: opts.TracerOptions,
		Variant:       opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			return s.Variables["targ_metric"].Set(table)
		},
	})
}
