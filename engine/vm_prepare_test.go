package engine

import (
	"errors"
	"testing"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// In virtual time a scenario that waits on a disk cannot be measured: one
// named is refused (bad input), and a run of every built-in (run, gate or
// matrix without scenario names: SkipUnsupported) passes over it with the
// reason, keeping the rest.
func TestPrepareInVirtualTimePassesOverDiskWaits(t *testing.T) {
	fsync, err := scenarios.Lookup("fsync-scratch")
	if err != nil {
		t.Fatal(err)
	}
	read, err := scenarios.Lookup("syscall-read")
	if err != nil {
		t.Fatal(err)
	}
	target := func() *VM {
		return &VM{Target: &vm.Target{Name: "t", Settings: vm.Settings{Accel: "tcg", Clock: vm.ClockVirtual}}}
	}
	req := runner.Request{Scenarios: []*scenarios.Scenario{fsync, read}}
	if _, err := target().Prepare(req); !errors.As(err, new(*InputError)) {
		t.Errorf("fsync-scratch named in virtual time: %v, want bad input", err)
	}
	req.SkipUnsupported = true
	v := target()
	got, err := v.Prepare(req)
	if err != nil {
		t.Fatalf("every built-in in virtual time: %v", err)
	}
	if len(got.Scenarios) != 1 || got.Scenarios[0].Name != "syscall-read" {
		t.Errorf("kept %d scenarios, want syscall-read alone", len(got.Scenarios))
	}
	if len(v.skipped) != 1 || v.skipped[0].Scenario != "fsync-scratch" || v.skipped[0].Reason == "" {
		t.Errorf("skipped %+v, want fsync-scratch with its reason", v.skipped)
	}
}
