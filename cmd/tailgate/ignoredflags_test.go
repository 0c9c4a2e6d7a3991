package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A flag that no step would use is bad usage, never silently dropped:
// VM settings on the host, VM settings beside a named target (which takes
// them from the targets file), run flags with --candidate, and the flags
// of a gate in one job with --baseline.
func TestIgnoredFlagsRefused(t *testing.T) {
	calls := stubRunner(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	cand := fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.write(t, dir, "cand.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "syscall-read", "--vcpus", "4"}, "--vcpus: VM settings, and this run is on the host"},
		{[]string{"run", "syscall-read", "--cmdline", "quiet", "--accel", "tcg"}, "--accel, --cmdline: VM settings"},
		{[]string{"run", "syscall-read", "--memory", "1024"}, "--memory: VM settings"}, // the default, given: still ignored
		{[]string{"run", "syscall-read", "--deadline", "5m"}, "--deadline: VM settings"},
		{[]string{"run", "syscall-read", "--kernel-cache", dir}, "--kernel-cache: VM settings"},
		{[]string{"run", "syscall-read", "--target", "debian-6.1-cloud", "--vcpus", "4"}, "--vcpus: --target takes its VM settings from the targets file"},
		{[]string{"gate", "syscall-read", "--baseline", store, "--save-baseline", "--vcpus", "4"}, "--vcpus: VM settings"},
		{[]string{"gate", "syscall-read", "--variant", "a", "--variant", "b:vm.swappiness=10", "--memory", "2048"}, "--memory: VM settings"},
		{[]string{"matrix", "syscall-read", "--variant", "a", "--variant", "b:vm.swappiness=10", "--cmdline", "quiet"}, "--cmdline: VM settings"},
		{[]string{"gate", "--candidate", cand, "--baseline", store, "--kernel", "debian:6.1-cloud"}, "--kernel only apply to a run; --candidate does not run"},
		{[]string{"gate", "--candidate", cand, "--baseline", store, "--vcpus", "4", "--accel", "kvm"}, "--accel, --vcpus only apply to a run"},
		{[]string{"gate", "syscall-read", "--baseline", store, "--save-baseline", "--budget", "5m"}, "--budget only apply to a gate of two targets"},
		{[]string{"gate", "syscall-read", "--baseline", store, "--save-baseline", "--variant", "tuned:vm.swappiness=10"}, "--variant only apply to a gate of two targets"},
	} {
		code, _, stderr := cli(tc.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and one line with %q: %q", tc.args, code, tc.want, stderr)
		}
	}
	if *calls != 0 {
		t.Errorf("%d runs before refusing", *calls)
	}
}
