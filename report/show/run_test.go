package show

import (
	"bytes"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func TestRenderRunGolden(t *testing.T) {
	trial := func(base uint64, n int, cost float64) result.Trial {
		h := hist.New()
		for i := range n {
			h.Record(base + uint64(i%97)*base/50)
		}
		return result.Trial{Histogram: h, Summary: result.Summarize(h), TracerCostNs: cost, Ops: 4000, Duration: 0.5}
	}
	r := &result.Result{
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0-57-cloud-amd64"},
		Scenarios: []result.Scenario{{
			Name:   "syscall-read",
			Trials: 2,
			Gate:   map[string]map[string]float64{"syscall.read": {"p99": 0.1}},
			Metrics: map[string]*result.Metric{
				"syscall.read":         {Unit: "ns", Trials: []result.Trial{trial(420, 5000, 140), trial(430, 5000, 142)}},
				"sched.runq":           {Unit: "ns", Trials: []result.Trial{trial(9000, 300, 330), trial(12000, 250, 320)}},
				"sched.wakeup_new":     {Unit: "ns", Trials: []result.Trial{{Histogram: hist.New()}, {Histogram: hist.New()}}},
				"sched.runq_preempted": {Unit: "ns", Trials: []result.Trial{{Histogram: hist.New()}, {Histogram: hist.New()}}},
			},
		}},
		Partial: true,
		Error:   "interrupted",
	}
	var b bytes.Buffer
	if err := RenderRun(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "run.golden", b.Bytes())
}

func TestRenderRunOneTrial(t *testing.T) {
	h := hist.New()
	h.Record(500)
	r := &result.Result{
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0"},
		Scenarios: []result.Scenario{{
			Name:    "syscall-read",
			Trials:  1,
			Metrics: map[string]*result.Metric{"syscall.read": {Unit: "ns", Trials: []result.Trial{{Histogram: h, Ops: 1}}}},
		}},
	}
	var b bytes.Buffer
	if err := RenderRun(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "syscall-read (1 trial, host on 6.1.0)\n"; !bytes.HasPrefix(b.Bytes(), []byte(want)) {
		t.Errorf("got %q, want it to start with %q", b.String(), want)
	}
}

// An exec command without ops whose every run the trial's end cut counts
// no op: its ops/s reads "-", not a rate of 0.
func TestRenderRunNoOpsIsDash(t *testing.T) {
	h := hist.New()
	h.Record(15000)
	r := &result.Result{
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0"},
		Scenarios: []result.Scenario{{
			Name:    "work",
			Trials:  1,
			Metrics: map[string]*result.Metric{"ufunc.work:tg_op": {Unit: "ns", Trials: []result.Trial{{Histogram: h, Ops: 0, Duration: 0.3}}}},
		}},
	}
	var b bytes.Buffer
	if err := RenderRun(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(b.Bytes(), []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("| ufunc.work:tg_op")) {
			continue
		}
		cells := bytes.Split(l, []byte("|"))
		if got := string(bytes.TrimSpace(cells[3])); got != "-" {
			t.Errorf("ops/s reads %q for a metric with no op counted, want -\n%s", got, b.String())
		}
		return
	}
	t.Fatalf("no row for the metric:\n%s", b.String())
}
