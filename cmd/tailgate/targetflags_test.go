package main

import (
	"strings"
	"testing"
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
