// Package syscalls is the syscall latency tracer: for each configured
// syscall, the time from raw_syscalls:sys_enter to sys_exit of the
// workload's tasks, as metric syscall.<name>.
package syscalls

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// nrMax must match SYSCALL_NR_MAX in syscall.h.
const nrMax = 512

// numbers are the x86_64 syscalls that can be traced by name.
var numbers = map[string]int{
	"read":            unix.SYS_READ,
	"write":           unix.SYS_WRITE,
	"pread64":         unix.SYS_PREAD64,
	"pwrite64":        unix.SYS_PWRITE64,
	"getppid":         unix.SYS_GETPPID,
	"getpid":          unix.SYS_GETPID,
	"futex":           unix.SYS_FUTEX,
	"nanosleep":       unix.SYS_NANOSLEEP,
	"clock_nanosleep": unix.SYS_CLOCK_NANOSLEEP,
	"epoll_wait":      unix.SYS_EPOLL_WAIT,
	"epoll_pwait":     unix.SYS_EPOLL_PWAIT,
	"poll":            unix.SYS_POLL,
	"ppoll":           unix.SYS_PPOLL,
	"select":          unix.SYS_SELECT,
	"fsync":           unix.SYS_FSYNC,
	"fdatasync":       unix.SYS_FDATASYNC,
	"openat":          unix.SYS_OPENAT,
	"close":           unix.SYS_CLOSE,
	"mmap":            unix.SYS_MMAP,
	"munmap":          unix.SYS_MUNMAP,
	"sched_yield":     unix.SYS_SCHED_YIELD,
	"clone":           unix.SYS_CLONE,
	"clone3":          unix.SYS_CLONE3,
	"fork":            unix.SYS_FORK,
	"wait4":           unix.SYS_WAIT4,
	"sendto":          unix.SYS_SENDTO,
	"recvfrom":        unix.SYS_RECVFROM,
	"connect":         unix.SYS_CONNECT,
	"accept4":         unix.SYS_ACCEPT4,
	"ioctl":           unix.SYS_IOCTL,
}

// Number returns the x86_64 number of a syscall name.
func Number(name string) (int, bool) {
	n, ok := numbers[name]
	return n, ok
}

// Names returns the syscalls that can be traced, sorted.
func Names() []string {
	var ns []string
	for n := range numbers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Metric returns the metric name of a syscall.
func Metric(name string) string { return "syscall." + name }

// Options configure the tracer.
type Options struct {
	TGID     uint32
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
		nr, ok := numbers[name]
		if !ok {
			return nil, fmt.Errorf("syscall tracer: unknown syscall %q; known: %v", name, Names())
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
		Name:    "syscall",
		Metrics: metrics,
		TGID:    opts.TGID,
		Variant: opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			return s.Variables["targ_metric"].Set(table)
		},
	})
}
