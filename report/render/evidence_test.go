package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
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

// TestRegressionEvidenceGolden: the regression's Markdown (the PR comment)
// and text carry the candidate's slowest events beside the baseline's.
// evidenceReport is sampleReport with Results whose events explain its
// regression.
func evidenceReport() *report.Report {
	r := sampleReport()
	r.BaseResult = evidenceResult([]result.Event{ev(61_000, "tailgate", 4102, "kworker/0:1")})
	slow, slower := ev(2_400_000, "tailgate", 4102, "stress-ng-cpu"), ev(1_900_000, "tailgate", 4102, "stress-ng-cpu")
	slow.Interference = &result.Interference{HardirqNs: 4_200, SoftirqNs: 12_000, TasksNs: 2_350_000, Top: []result.Contributor{
		{Kind: "task", Name: "stress-ng-cpu", TID: 999, Ns: 2_350_000},
		{Kind: "softirq", Name: "net_rx", Ns: 12_000},
		{Kind: "hardirq", Name: "local_timer", Ns: 4_200},
	}}
	slower.Interference = &result.Interference{TasksNs: 1_200_000, Partial: true, Top: []result.Contributor{
		{Kind: "task", Name: "stress-ng-cpu", TID: 999, Ns: 1_200_000},
	}}
	r.CandResult = evidenceResult(
		[]result.Event{slow, ev(1_100_000, "tailgate", 4103, "stress-ng-cpu")},
		[]result.Event{slower},
	)
	// The Results of the two sides sampleReport names.
	r.BaseResult.Target = result.Target{Name: "host", Kind: "host"}
	r.BaseResult.Environment.KernelRelease = "6.1.0-28-amd64"
	r.CandResult.Target = result.Target{Name: "debian-6.12", Kind: "vm", Accel: "kvm"}
	r.CandResult.Environment.KernelRelease = "6.12.9-amd64"
	return r
}

func TestRegressionEvidenceGolden(t *testing.T) {
	r := evidenceReport()
	for _, f := range []Format{FormatMarkdown, FormatText, FormatHTML} {
		var b bytes.Buffer
		if err := WriteReport(&b, r, f); err != nil {
			t.Fatal(err)
		}
		if f != FormatHTML { // the page's plots are checked elsewhere
			checkGolden(t, "evidence-"+string(f), b.Bytes())
		}
		if !bytes.Contains(b.Bytes(), []byte("stress-ng-cpu 999 (prio 120)")) {
			t.Errorf("%s: the task that ran instead is not shown", f)
		}
		if !bytes.Contains(b.Bytes(), []byte("task stress-ng-cpu 2.35ms, softirq net")) {
			t.Errorf("%s: the interference on the event's CPU is not shown", f)
		}
	}
	// A report without evidence shows no evidence section.
	var b bytes.Buffer
	if err := WriteReport(&b, sampleReport(), FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("Slowest events")) {
		t.Error("evidence section without evidence")
	}
}

// The grown frames are words a reader can act on: each function with its
// shares and the growth in points, a kernel function marked, and why
// there is nothing to name when that is so.
func TestGrownLines(t *testing.T) {
	e := report.Evidence{Scenario: "srv", Metric: "request.server", Grown: report.Grown{
		Quantile: 0.999, BaseSamples: 10, CandSamples: 20,
		Frames: []report.FrameShare{{Function: "__vdso_clock_gettime", Base: 0.02, Cand: 0.71}, {Function: "tcp_sendmsg", Kernel: true, Base: 0.1, Cand: 0.2}},
	}}
	got := grownLines(e)
	want := []string{"__vdso_clock_gettime: 2% → 71% (+69 points)", "tcp_sendmsg [kernel]: 10% → 20% (+10 points)"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if h := grownHead(e); !strings.Contains(h, "above p99.9 of request.server in srv") || !strings.Contains(h, "baseline 10, candidate 20 samples") {
		t.Errorf("head %q", h)
	}
	for _, c := range []struct {
		g    report.Grown
		want []string
	}{
		{report.Grown{}, nil},
		{report.Grown{BaseSamples: 3}, []string{"one side has no samples: nothing to compare"}},
		{report.Grown{BaseSamples: 3, CandSamples: 4}, []string{"no function's share grew by a point"}},
	} {
		if got := grownLines(report.Evidence{Grown: c.g}); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.g, got, c.want)
		}
	}
}
