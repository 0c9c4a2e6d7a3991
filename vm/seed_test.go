package vm

import "testing"

// A seed's draws: a start phase within [0, MaxPhase) that seeds 1, 2, ...
// spread over it, and a layout token of one length for every seed.
func TestSeedDraws(t *testing.T) {
	phases := map[int64]bool{}
	var early, late int
	for s := uint64(1); s <= 1000; s++ {
		p := PhaseOf(s)
		if p < 0 || p >= MaxPhase {
			t.Fatalf("seed %d: phase %v outside [0, %v)", s, p, MaxPhase)
		}
		phases[int64(p)] = true
		if p < MaxPhase/2 {
			early++
		} else {
			late++
		}
		if len(SeedToken(s)) != len(SeedToken(1)) {
			t.Errorf("seed %d: token %q, of another length than seed 1's %q", s, SeedToken(s), SeedToken(1))
		}
	}
	if len(phases) < 999 || early < 400 || late < 400 {
		t.Errorf("1000 seeds: %d distinct phases, %d in the first half and %d in the second", len(phases), early, late)
	}
	if PhaseOf(7) != PhaseOf(7) || SeedToken(7) == SeedToken(8) {
		t.Error("a seed's draws are not its own")
	}
}
