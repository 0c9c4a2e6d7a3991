package report

import (
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// evidenceResult is a Result of pipe-pingpong whose sched.wakeup trials
// carry the given slowest events, one trial per slice.
func evidenceResult(trials ...[]result.Event) *result.Result {
	m := &result.Metric{Unit: "ns"}
	for _, evs := range trials {
		m.Trials = append(m.Trials, result.Trial{Slowest: evs})
	}
	return &result.Result{Scenarios: []result.Scenario{{
		Name:    "pipe-pingpong",
		Metrics: map[string]*result.Metric{"sched.wakeup": m},
	}}}
}

func ev(lat uint64, comm string, tid int, other string) result.Event {
	e := result.Event{
		LatencyNs: lat, CPU: tid % 2, Comm: comm, PID: 4100, TID: tid,
		KernelStack: []string{"anon_pipe_read+0x393", "vfs_read+0x397", "ksys_read+0xc3", "do_syscall_64+0x71"},
		UserStack:   []string{"syscall.Syscall+0x5", "main.pong+0x3c"},
	}
	if other != "" {
		e.Other = &result.Task{Comm: other, TID: 999, Prio: 120}
	}
	return e
}

func TestSlowestEventsAcrossTrials(t *testing.T) {
	res := evidenceResult(
		[]result.Event{ev(900, "a", 1, ""), ev(300, "a", 1, "")},
		[]result.Event{ev(1200, "b", 2, ""), ev(500, "b", 2, "")},
	)
	got := SlowestEvents(res, "pipe-pingpong", "sched.wakeup", 3)
	want := []uint64{1200, 900, 500}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.LatencyNs != want[i] {
			t.Errorf("event %d: %d ns, want %d", i, e.LatencyNs, want[i])
		}
	}
	if n := len(SlowestEvents(res, "other", "sched.wakeup", 3)); n != 0 {
		t.Errorf("%d events of a scenario not in the Result", n)
	}
}
