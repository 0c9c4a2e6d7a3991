package engine

import (
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/scenarios"
)

// A VM's trials are lengthened to vmMinTrial unless --duration is given;
// the scenarios passed in are not changed.
func TestLengthenVMTrials(t *testing.T) {
	short := &scenarios.Scenario{Name: "short", Duration: 500 * time.Millisecond}
	long := &scenarios.Scenario{Name: "long", Duration: 5 * time.Second}
	got := lengthenVMTrials([]*scenarios.Scenario{short, long})
	if got[0].Duration != vmMinTrial || got[1].Duration != 5*time.Second {
		t.Errorf("durations %v, %v; want %v and 5s", got[0].Duration, got[1].Duration, vmMinTrial)
	}
	if short.Duration != 500*time.Millisecond || got[1] != long {
		t.Error("the scenarios given were changed, or an unchanged one copied")
	}
}

func TestPlanRounds(t *testing.T) {
	if got := planRounds(3, 5*time.Second, 1700*time.Millisecond, 3*time.Minute); got != 3+102 {
		t.Errorf("3 rounds in 5s, 1.7s a round, 3m budget: %d rounds planned, want 105", got)
	}
	if got := planRounds(3, 5*time.Second, time.Millisecond, 3*time.Minute); got != MaxGateRounds {
		t.Errorf("fast rounds: %d planned, want the cap %d", got, MaxGateRounds)
	}
	if got := planRounds(3, 4*time.Minute, time.Second, 3*time.Minute); got != 3 {
		t.Errorf("budget already spent: %d planned, want the 3 done", got)
	}
}
