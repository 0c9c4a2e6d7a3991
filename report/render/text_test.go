package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// TestWriteTextGatedFirstNoEvents checks the text table shows the gated
// rows (all rows with -v, the gated metric first) and names metrics
// without events on one line.
func TestWriteTextGatedFirstNoEvents(t *testing.T) {
	r := &report.Report{
		Base: report.Side{Target: "host", KernelRelease: "6.1.0"},
		Cand: report.Side{Target: "host", KernelRelease: "6.1.0"},
		Scenarios: []report.ScenarioReport{{
			Name: "syscall-read",
			Verdicts: []stats.Verdict{
				{Metric: "sched.runq", Quantile: "p99", Base: 9000, Cand: 9100, Ratio: 1.011, Lo: 0.98, Hi: 1.04, Kind: stats.NotGated,
					Warnings: []stats.Warning{{Kind: stats.WarnOneTrial}}},
				{Metric: "syscall.read", Quantile: "p50", Base: 400, Cand: 401, Ratio: 1.0025, Lo: 0.99, Hi: 1.01, Kind: stats.NotGated},
				{Metric: "syscall.read", Quantile: "p99", Base: 800, Cand: 810, Ratio: 1.0125, Lo: 0.99, Hi: 1.03, Threshold: 0.1, Gated: true, Kind: stats.NoChange},
			},
			Warnings: []stats.Warning{
				{Kind: stats.WarnMetricNoEvents, Scenario: "syscall-read", Metric: "sched.runq_preempted"},
				{Kind: stats.WarnMetricNoEvents, Scenario: "syscall-read", Metric: "sched.wakeup_new"},
				{Kind: report.WarnMetricOneSide, Side: stats.Baseline, Scenario: "syscall-read", Metric: "syscall.write"},
			},
		}},
	}
	rowsOf := func(out string) []string {
		var metrics []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "|" && f[1] != "metric" {
				metrics = append(metrics, f[1]+" "+f[3])
			}
		}
		return metrics
	}
	// -v: every row, the gated metric first.
	var v bytes.Buffer
	if err := WriteText(&v, r.Matrix(), TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"syscall.read p50", "syscall.read p99", "sched.runq p99"}, rowsOf(v.String())); diff != "" || strings.Contains(v.String(), "-v shows") || !strings.Contains(v.String(), "warning: sched.runq p99: ") {
		t.Errorf("-v: row order (-want +got):\n%s\n%s", diff, v.String())
	}
	// Without: the gated row, and how many more -v shows.
	var b bytes.Buffer
	if err := WriteReport(&b, r, FormatText); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if diff := cmp.Diff([]string{"syscall.read p99"}, rowsOf(out)); diff != "" || !strings.Contains(out, "\n-v shows 2 rows not gated and 1 warning about what is not gated\n") || strings.Contains(out, "sched.runq p99") {
		t.Errorf("rows (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "\nno events: sched.runq_preempted, sched.wakeup_new\n") {
		t.Errorf("no single no-events line:\n%s", out)
	}
	if strings.Contains(out, "has no events") {
		t.Errorf("no-events metrics also warned about one by one:\n%s", out)
	}
	if !strings.Contains(out, "warning: metric syscall.write is in the baseline only") {
		t.Errorf("other warnings lost:\n%s", out)
	}
}
