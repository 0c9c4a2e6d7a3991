package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
)

// SyscallNumbers maps the syscall names a scenario may trace to their
// x86_64 numbers: the names the syscall tracer knows.
var SyscallNumbers = sysnum.Numbers

// MetricTimerLateness is the timer workload's own metric: wakeup − deadline.
const MetricTimerLateness = "timer.lateness"

// Metrics returns the names of the metrics s produces, in a fixed order:
// each attached tracer's, in the order of the registry (bpf/tracers)
// and as its config orders them (syscall.<name> in the order written),
// then the workload's own (timer.lateness).
func Metrics(s *Scenario) []string {
	var ms []string
	for _, k := range tracers.All {
		if c := s.Tracers[k.Name]; c != nil {
			ms = append(ms, c.Metrics()...)
		}
	}
	return append(ms, workloadMetrics(s.Workload)...)
}

// AllMetrics returns the metrics of every scenario of ss, each
// scenario's in Metrics' order: what a --threshold may name.
func AllMetrics(ss []*Scenario) []string {
	var out []string
	for _, s := range ss {
		out = append(out, Metrics(s)...)
	}
	return out
}

// Params returns a digest (sha256, hex) of what changes the measurement:
// the workload, the tracers and the duration. Trials, warmup, the gate,
// the name and the description are left out, so runs with more trials or a
// new threshold still compare with older baselines. Zero workload fields
// hash as their defaults, and the traced syscalls as a set.
func Params(s *Scenario) string {
	tr := Tracers{}
	for name, c := range s.Tracers {
		if cc, ok := c.(canonicalConfig); ok {
			c = cc.Canonical()
		}
		tr[name] = c
	}
	w := s.Workload.withDefaults()
	if cp, ok := w.Params.(canonicalParams); ok {
		w.Params = cp.Canonical()
	}
	b, err := json.Marshal(struct {
		Version  int      `json:"v"`
		Workload Workload `json:"workload"`
		Tracers  Tracers  `json:"tracers"`
		Duration int64    `json:"duration_ns"`
	}{1, w, tr, int64(s.Duration)})
	if err != nil {
		// These types always marshal.
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonicalParams is a workload kind's parameters that hold what does not
// change the measurement (where a checkout is, a process's pid); Params
// hashes its canonical form, a JSON object.
type canonicalParams interface {
	Canonical() any
}

// canonicalConfig is a tracer config that has several spellings of one
// measurement (a set written as a list); Params hashes its canonical one.
type canonicalConfig interface {
	Canonical() tracing.Config
}

// DefaultGateThreshold is the p99 threshold of a scenario with no gate
// block.
const DefaultGateThreshold = 0.10

// PrimaryMetrics returns the metrics a scenario is about, the ones gated
// when it has no gate block: the workload's own measurement (timer.lateness)
// if it makes one, with a server's requests beside it when its tracer is
// there, else its tracers' primary metrics (the traced syscalls),
// else those of its background tracers (sched.runq); see tracing.Kind.
func PrimaryMetrics(s *Scenario) []string {
	if ms := workloadMetrics(s.Workload); len(ms) > 0 {
		// A server's requests (the request tracer, its default) are its
		// operation as much as what its client measures: both are gated.
		tw := tracerWorkload(s.Workload)
		for _, k := range tracers.All {
			if c := s.Tracers[k.Name]; c != nil && k.Default != nil && k.Default(tw) != nil {
				ms = append(ms, c.Primary()...)
			}
		}
		return ms
	}
	var primary, background []string
	for _, k := range tracers.All {
		c := s.Tracers[k.Name]
		switch {
		case c == nil:
		case k.Background:
			background = append(background, c.Primary()...)
		default:
			primary = append(primary, c.Primary()...)
		}
	}
	if len(primary) > 0 {
		return primary
	}
	return background
}

// GatePolicy returns what a run of s gates: its gate block, or, when it has
// none, p99 of its primary metrics at DefaultGateThreshold. Everything else
// is reported, not gated: each gated test spends part of the gate's
// false-alarm budget.
func GatePolicy(s *Scenario) result.GatePolicy {
	if len(s.Gate) > 0 {
		return s.Gate.Clone()
	}
	out := result.GatePolicy{}
	for _, m := range PrimaryMetrics(s) {
		out[m] = map[string]float64{"p99": DefaultGateThreshold}
	}
	return out
}
