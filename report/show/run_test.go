package show

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

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
	if err := RenderRun(&b, r, 0); err != nil {
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
	if err := RenderRun(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	if want := "syscall-read (1 trial, host on 6.1.0)\n"; !bytes.HasPrefix(b.Bytes(), []byte(want)) {
		t.Errorf("got %q, want it to start with %q", b.String(), want)
	}
}

// An exec command without ops whose every run the trial's end cut counts
// no op: its heading gives no rate, not a rate of 0.
func TestRenderRunNoOpsNoRate(t *testing.T) {
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
	if err := RenderRun(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	if want := "work (1 trial, host on 6.1.0)\n"; !strings.HasPrefix(b.String(), want) || strings.Contains(b.String(), "ops/s") {
		t.Errorf("want a heading %q and no rate:\n%s", want, b.String())
	}
}

// wideRun is a Result of tcp-rr-small's kind: long metric names, a gated
// pair, more metrics without events than fit a line.
func wideRun() *result.Result {
	trial := func(base uint64, n int) result.Trial {
		h := hist.New()
		for i := range n {
			h.Record(base + uint64(i%89)*base/40)
		}
		return result.Trial{Histogram: h, Summary: result.Summarize(h), TracerCostNs: 3320, Ops: 2788, Duration: 0.2}
	}
	ms := map[string]*result.Metric{}
	for i, n := range []string{"tcp.rr", "net.tcp.deliver", "irq.hard.virtio0-reporting_vq", "softirq.net_rx.duration", "sched.runq_preempted"} {
		ms[n] = &result.Metric{Unit: "ns", Trials: []result.Trial{trial(uint64(1000*(i+1)), 3000), trial(uint64(1100*(i+1)), 3000)}}
	}
	for _, n := range []string{"irq.hard.ACPI:Ged", "irq.hard.ttyS0", "irq.hard.virtio0-deflate", "irq.hard.virtio0-inflate", "irq.hard.virtio0-stats",
		"irq.hard.virtio1-config", "irq.hard.virtio2-config", "irq.hard.virtio3-config", "softirq.block.duration", "softirq.block.latency"} {
		ms[n] = &result.Metric{Unit: "ns", Trials: []result.Trial{{Histogram: hist.New(), Ops: 2788, Duration: 0.2}, {Histogram: hist.New(), Ops: 2788, Duration: 0.2}}}
	}
	return &result.Result{
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.18.44-fc-v1252"},
		Scenarios: []result.Scenario{{Name: "tcp-rr-small", Trials: 2, Metrics: ms,
			Gate: map[string]map[string]float64{"tcp.rr": {"p99": 0.1}, "net.tcp.deliver": {"p99": 0.1}}}},
	}
}

// TestRenderRunWidths: at 80 and 100 columns (a terminal, a pipe) no line
// of a run's table is wider, and every metric, percentile and the rate
// are still there; the rate is said once, in the heading, not on the
// rows of metrics it is not a rate of. The bordered table goes narrower
// only when it does not fit.
func TestRenderRunWidths(t *testing.T) {
	r := wideRun()
	for _, width := range []int{80, 100, 0} {
		var b bytes.Buffer
		if err := RenderRun(&b, r, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); width > 0 && n > width {
				t.Errorf("width %d: line %d is %d columns: %q", width, i+1, n, l)
			}
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, want := range []string{"tcp.rr", "irq.hard.virtio0-reporting_vq", "p99.9", "softirq.block.latency", "(2 trials, host on 6.18.44-fc-v1252, 13.9k ops/s)"} {
			if !strings.Contains(flat, want) {
				t.Errorf("width %d lacks %q:\n%s", width, want, out)
			}
		}
		if n := strings.Count(out, "ops/s"); n != 1 {
			t.Errorf("width %d: ops/s said %d times, want once, in the heading:\n%s", width, n, out)
		}
		// The bordered table is 98 columns wide.
		if bordered := strings.Contains(out, "| metric "); bordered != (width != 80) {
			t.Errorf("width %d: bordered table %v, want %v:\n%s", width, bordered, width != 80, out)
		}
	}
}
