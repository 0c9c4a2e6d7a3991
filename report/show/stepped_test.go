package show

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// TestSteppedWarnings: a probe single-stepped on one side is named with
// that side, on both sides once with neither, and an emulated one not at
// all; a run's table ends with a note for each.
func TestSteppedWarnings(t *testing.T) {
	scen := func(probes ...result.Probe) *result.Scenario {
		return &result.Scenario{Name: "work", Tracers: []result.TracerInfo{{Name: "ufunc", Variant: "uprobe", Probes: probes}}}
	}
	xor := result.Probe{Symbol: "tg_op", Insn: "31c0", Mnemonic: "xor", SingleStepped: true}
	push := result.Probe{Symbol: "tg_op", Insn: "53", Mnemonic: "push"}
	other := result.Probe{Symbol: "tg_other", Insn: "c3", SingleStepped: true}

	ws := report.SteppedWarnings(scen(push), scen(xor, other))
	if len(ws) != 2 || ws[0].Side != stats.Candidate || ws[1].Side != stats.Candidate {
		t.Fatalf("warnings %+v, want tg_op and tg_other in the candidate", ws)
	}
	want := "tg_op begins with xor (31c0) in the candidate, which the kernel single-steps under its uprobe on every call"
	if got := render.WarningText(ws[0]); !strings.HasPrefix(got, want) {
		t.Errorf("wording:\n%s\nwant it to begin\n%s", got, want)
	}
	if got := render.WarningText(ws[1]); !strings.HasPrefix(got, "tg_other begins with an instruction (c3) in the candidate") {
		t.Errorf("an unnamed instruction: %s", got)
	}
	if ws := report.SteppedWarnings(scen(xor), scen(xor)); len(ws) != 1 || ws[0].Side != stats.Both || strings.Contains(render.WarningText(ws[0]), "in the candidate") || strings.Contains(render.WarningText(ws[0]), "in the baseline") {
		t.Errorf("both sides: %+v", ws)
	}
	if ws := report.SteppedWarnings(scen(push), scen(push)); len(ws) != 0 {
		t.Errorf("an emulated push warned: %+v", ws)
	}

	h := hist.New()
	h.Record(12000)
	r := &result.Result{
		Target:    result.Target{Name: "host", Kind: "host"},
		Scenarios: []result.Scenario{*scen(xor)},
	}
	r.Scenarios[0].Trials = 1
	r.Scenarios[0].Metrics = map[string]*result.Metric{"ufunc.work:tg_op": {Unit: "ns", Trials: []result.Trial{{Histogram: h, Summary: result.Summarize(h)}}}}
	var b bytes.Buffer
	if err := RenderRun(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nnote: tg_op begins with xor (31c0), which the kernel single-steps") {
		t.Errorf("run table without the note:\n%s", b.String())
	}
}
