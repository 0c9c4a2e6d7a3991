package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
	"maps"
	"slices"
)

// SyscallNumbers maps the syscall names a scenario may trace to their
// x86_64 numbers: the names the syscall tracer knows.
var SyscallNumbers = sysnum.Numbers

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

// DefaultGateThreshold is the p99 threshold of a scenario with no gate
// block.
const DefaultGateThreshold = 0.10

// PrimaryMetrics returns the metrics a scenario is about, the ones gated
// when it has no gate block: the workload's own measurement (timer.lateness)
// if it makes one, else the traced syscalls, else sched.runq.
func PrimaryMetrics(s *Scenario) []string {
	if s.Workload.Kind == "timer" {
		return []string{MetricTimerLateness}
	}
	if t := s.Tracers.Syscall; t != nil && len(t.Syscalls) > 0 {
		var ms []string
		for _, name := range t.Syscalls {
			ms = append(ms, syscallMetricPrefix+name)
		}
		return ms
	}
	if s.Tracers.Sched != nil {
		return []string{MetricSchedRunq}
	}
	return nil
}

// GatePolicy returns what a run of s gates: its gate block, or, when it has
// none, p99 of its primary metrics at DefaultGateThreshold. Everything else
// is reported, not gated: each gated test spends part of the gate's
// false-alarm budget.
func GatePolicy(s *Scenario) map[string]map[string]float64 {
	if len(s.Gate) > 0 {
		out := make(map[string]map[string]float64, len(s.Gate))
		for m, ps := range s.Gate {
			out[m] = maps.Clone(ps)
		}
		return out
	}
	out := map[string]map[string]float64{}
	for _, m := range PrimaryMetrics(s) {
		out[m] = map[string]float64{"p99": DefaultGateThreshold}
	}
	return out
}
