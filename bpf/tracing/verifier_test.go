package tracing

import (
	"testing"
	"time"
)

func TestVerifierStatsLog(t *testing.T) {
	// As Linux 6.18 writes it at ebpf.LogLevelStats.
	log := "verification time 2914295 usec\nstack depth 256+128\n" +
		"processed 692322 insns (limit 1000000) max_states_per_insn 48 total_states 37360 peak_states 49962 mark_read 0\n"
	if got, want := logVerifyTime(log), 2914295*time.Microsecond; got != want {
		t.Errorf("verification time %v, want %v", got, want)
	}
	if got := logInsns(log); got != 692322 {
		t.Errorf("processed %d insns, want 692322", got)
	}
	if logVerifyTime("") != 0 || logInsns("processed many insns") != 0 {
		t.Error("a log without statistics gave some")
	}
}

func TestLoadCostSlowest(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost LoadCost
		want string
	}{
		{"by time", LoadCost{Programs: []ProgramLoad{{"a", 900, time.Millisecond}, {"b", 100, 2 * time.Millisecond}}}, "b"},
		{"by insns without times", LoadCost{Programs: []ProgramLoad{{"a", 900, 0}, {"b", 100, 0}}}, "a"},
		{"none", LoadCost{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := tc.cost.Slowest()
			if p.Program != tc.want || ok != (tc.want != "") {
				t.Errorf("Slowest() = %q, %v; want %q", p.Program, ok, tc.want)
			}
		})
	}
}
