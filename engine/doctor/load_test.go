package doctor

import (
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

func TestTracerLoaded(t *testing.T) {
	sched := []tracing.ProgramLoad{
		{Program: "sched_wakeup_btf", Insns: 45, Verify: 300 * time.Microsecond},
		{Program: "sched_switch_btf", Insns: 692322, Verify: 2760 * time.Millisecond},
	}
	for _, tc := range []struct {
		name string
		cost tracing.LoadCost
		want []string // a check's detail each; a second is the slow load's
	}{
		{"quick", tracing.LoadCost{Took: 38 * time.Millisecond, Programs: sched},
			[]string{"loads in 38 ms and attaches (tp_btf)"}},
		{"at the line", tracing.LoadCost{Took: SlowLoad, Programs: sched},
			[]string{"loads in 500 ms and attaches (tp_btf)"}},
		{"slow", tracing.LoadCost{Took: 2810 * time.Millisecond, Programs: sched},
			[]string{"loads in 2.8 s and attaches (tp_btf)",
				"2.8 s to load, 2.8 s of it verifying sched_switch_btf (692322 instructions): every run that attaches the sched tracer pays it once"}},
		{"slow without verifier times", tracing.LoadCost{Took: 700 * time.Millisecond,
			Programs: []tracing.ProgramLoad{{Program: "a", Insns: 10}, {Program: "sched_switch_btf", Insns: 692322}}},
			[]string{"loads in 700 ms and attaches (tp_btf)",
				"700 ms to load; the verifier spent the most on sched_switch_btf (692322 instructions): every run that attaches the sched tracer pays it once"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := TracerLoaded("sched", tracing.TPBTF, tc.cost)
			if len(cs) != len(tc.want) {
				t.Fatalf("%d checks, want %d: %+v", len(cs), len(tc.want), cs)
			}
			for i, c := range cs {
				if c.Detail != tc.want[i] {
					t.Errorf("check %d: %q, want %q", i, c.Detail, tc.want[i])
				}
			}
			if c := cs[0]; c.Name != "sched tracer" || c.Status() != "ok" {
				t.Errorf("tracer check %q is %s, want sched tracer ok", c.Name, c.Status())
			}
			if len(cs) == 2 {
				// A slow load warns: runs still work.
				if c := cs[1]; c.Name != "sched load" || c.Status() != "warn" {
					t.Errorf("slow-load check %+v (%s), want sched load, warn", c, c.Status())
				}
			}
		})
	}
}
