package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// SyscallNumbers maps the syscall names a scenario may trace to their
// x86_64 numbers, for the BPF loader. The syscall tracer accepts exactly
// these names.
var SyscallNumbers = map[string]int{
	"read":               0,
	"write":              1,
	"open":               2,
	"close":              3,
	"stat":               4,
	"fstat":              5,
	"lstat":              6,
	"poll":               7,
	"lseek":              8,
	"mmap":               9,
	"mprotect":           10,
	"munmap":             11,
	"brk":                12,
	"rt_sigprocmask":     14,
	"ioctl":              16,
	"pread64":            17,
	"pwrite64":           18,
	"readv":              19,
	"writev":             20,
	"access":             21,
	"pipe":               22,
	"select":             23,
	"sched_yield":        24,
	"mremap":             25,
	"msync":              26,
	"madvise":            28,
	"dup":                32,
	"dup2":               33,
	"nanosleep":          35,
	"getpid":             39,
	"sendfile":           40,
	"socket":             41,
	"connect":            42,
	"accept":             43,
	"sendto":             44,
	"recvfrom":           45,
	"sendmsg":            46,
	"recvmsg":            47,
	"shutdown":           48,
	"bind":               49,
	"listen":             50,
	"clone":              56,
	"fork":               57,
	"vfork":              58,
	"execve":             59,
	"exit":               60,
	"wait4":              61,
	"kill":               62,
	"fcntl":              72,
	"flock":              73,
	"fsync":              74,
	"fdatasync":          75,
	"truncate":           76,
	"ftruncate":          77,
	"rename":             82,
	"mkdir":              83,
	"rmdir":              84,
	"unlink":             87,
	"getrusage":          98,
	"getppid":            110,
	"sched_setscheduler": 144,
	"gettid":             186,
	"futex":              202,
	"sched_setaffinity":  203,
	"sched_getaffinity":  204,
	"getdents64":         217,
	"clock_gettime":      228,
	"clock_nanosleep":    230,
	"exit_group":         231,
	"epoll_wait":         232,
	"epoll_ctl":          233,
	"tgkill":             234,
	"openat":             257,
	"unlinkat":           263,
	"pselect6":           270,
	"ppoll":              271,
	"epoll_pwait":        281,
	"accept4":            288,
	"eventfd2":           290,
	"epoll_create1":      291,
	"pipe2":              293,
	"recvmmsg":           299,
	"sendmmsg":           307,
	"getrandom":          318,
	"membarrier":         324,
	"io_uring_enter":     426,
	"clone3":             435,
}

// Metric names of the tracers and workloads.
const (
	MetricSchedRunq          = "sched.runq"           // wakeup to running
	MetricSchedRunqPreempted = "sched.runq_preempted" // preempted while runnable, to running again
	MetricSchedWakeupNew     = "sched.wakeup_new"     // new task woken to running
	MetricTimerLateness      = "timer.lateness"       // timer workload: wakeup − deadline
	syscallMetricPrefix      = "syscall."
)

// Metrics returns the names of the metrics s produces, in a fixed order:
// syscall.<name> for each traced syscall in the order written, the sched
// metrics when the sched tracer is on, timer.lateness for timer workloads.
func Metrics(s *Scenario) []string {
	var ms []string
	if t := s.Tracers.Syscall; t != nil {
		for _, name := range t.Syscalls {
			ms = append(ms, syscallMetricPrefix+name)
		}
	}
	if s.Tracers.Sched != nil {
		ms = append(ms, MetricSchedRunq, MetricSchedRunqPreempted, MetricSchedWakeupNew)
	}
	if s.Workload.Kind == "timer" {
		ms = append(ms, MetricTimerLateness)
	}
	return ms
}

// Params returns a digest (sha256, hex) of what changes the measurement:
// the workload, the tracers and the duration. Trials, warmup, the gate,
// the name and the description are left out, so runs with more trials or a
// new threshold still compare with older baselines. Zero workload fields
// hash as their defaults, and the traced syscalls as a set.
func Params(s *Scenario) string {
	tr := s.Tracers
	if tr.Syscall != nil {
		names := slices.Clone(tr.Syscall.Syscalls)
		slices.Sort(names)
		tr.Syscall = &SyscallTracer{Syscalls: slices.Compact(names)}
	}
	b, err := json.Marshal(struct {
		Version  int      `json:"v"`
		Workload Workload `json:"workload"`
		Tracers  Tracers  `json:"tracers"`
		Duration int64    `json:"duration_ns"`
	}{1, s.Workload.withDefaults(), tr, int64(s.Duration)})
	if err != nil {
		// These types always marshal.
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
