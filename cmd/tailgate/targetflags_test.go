package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/scenarios"
)

// VM flags that could only fail later, in QEMU or in the guest, are bad
// usage: exit 2 in one line, before anything runs.
func TestTargetFlagsRefused(t *testing.T) {
	calls := stubRunner(t)
	for _, args := range [][]string{
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--accel", "frob"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--memory", "1"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--vcpus", "0"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--vcpus", "-1"},
		{"matrix", "syscall-read", "--kernel", "debian:6.1-cloud", "--kernel", "debian:6.12-cloud", "--memory", "100"},
		{"gate", "syscall-read", "--variant", "a", "--variant", "b", "--vcpus", "0"},
	} {
		code, _, stderr := cli(args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 with one line: %q", args, code, stderr)
		}
	}
	if *calls != 0 {
		t.Errorf("%d runs before refusing", *calls)
	}
}

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
