package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// These tests measure this kernel for real: no runner is swapped out.

// The gate block is the A/A noise floor measured on the shared two-vCPU
// machines CI runs on (BENCHMARKS.md): at the defaults (p50 5%, p99 10%)
// two runs minutes apart differ by more than that on such a machine, and
// the gate rightly calls the shift. What this test checks is that the same
// scenario on the same kernel is not called a regression at thresholds the
// machine can enforce.
const getppidScenario = `name: aa-getppid
description: getppid in a closed loop, syscall tracer only
workload:
  kind: syscall
  syscall: getppid
tracers:
  syscall:
    syscalls: [getppid]
trials: 5
warmup: 200ms
duration: 400ms
gate:
  "*":
    p50: 30%
    p90: 30%
    p99: 40%
    p99.9: 60%
`

// TestGateSameScenarioTwicePasses runs a scenario, saves it as the
// baseline, runs it again and gates: the same kernel and workload must pass.
// Each run is its own tailgate process, as in CI.
func TestGateSameScenarioTwicePasses(t *testing.T) {
	bin := buildTailgate(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "aa-getppid.yaml")
	if err := os.WriteFile(sc, []byte(getppidScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "baselines")
	gate := func(extra ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"gate", sc, "--baseline", base}, extra...)...)
		cmd.Env = append(cmd.Environ(), "CI=true")
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := gate("--save-baseline"); code != 0 {
		t.Fatalf("first gate (saves the baseline): exit %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 {
		t.Fatalf("baseline store has %d files, want 1", len(ents))
	}
	code, out := gate("--format", "markdown")
	if code != 0 {
		t.Fatalf("A/A gate: exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "syscall.getppid") {
		t.Errorf("report does not name syscall.getppid:\n%s", out)
	}
}

// TestCompareNoiseIsRegression measures futex ping-pong alone, then with a
// CPU hog per CPU competing for the run queues: sched.runq's tail must be
// called a regression, exit 1, and the Markdown must name it. The hogs
// take a time slice from a wakeup now and then, not from one in a hundred:
// p99 of the two runs' trials overlapped (p99 +176%, interval [+19%,
// ×5.4], inconclusive in 1 of 4 runs at ten trials a side, 1 of 3 at
// five), while p99.9 moved ×45 with the interval [×32, ×62]. So this test
// gates p99.9, where the noise really lands; its rerun rate is in
// BENCHMARKS.md.
func TestCompareNoiseIsRegression(t *testing.T) {
	dir := t.TempDir()
	quiet := filepath.Join(dir, "quiet.yaml")
	noisy := filepath.Join(dir, "noisy.yaml")
	const body = `name: pp
workload:
  kind: pingpong
  channel: futex
%s
tracers:
  sched: {}
trials: 10
warmup: 200ms
duration: 500ms
gate:
  sched.runq:
    p99.9: 10%%
`
	if err := os.WriteFile(quiet, []byte(fmt.Sprintf(body, "  noise: 0")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noisy, []byte(fmt.Sprintf(body, "  noise: ncpu")), 0o644); err != nil {
		t.Fatal(err)
	}

	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, run := range []struct{ sc, out string }{{quiet, a}, {noisy, b}} {
		if code, _, stderr := runInProcess(t, "run", run.sc, "-o", run.out); code != 0 {
			t.Fatalf("run %s: exit %d: %s", run.sc, code, stderr)
		}
	}
	// The scenarios differ in parameters (the noise): compare refuses
	// without --force.
	if code, _, stderr := runInProcess(t, "compare", a, b); code != exitUsage {
		t.Errorf("compare of different parameters without --force: exit %d, want %d: %s", code, exitUsage, stderr)
	}
	code, stdout, stderr := runInProcess(t, "compare", a, b, "--force", "--format", "markdown")
	if code != exitRegression {
		t.Fatalf("quiet vs noisy: exit %d, want %d\n%s\n%s", code, exitRegression, stdout, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.Contains(first, "regression") {
		t.Errorf("first line %q does not say regression", first)
	}
	if !strings.Contains(stdout, "sched.runq") {
		t.Errorf("markdown does not name sched.runq:\n%s", stdout)
	}
}

// TestGatePairCatchesRealSlowdown gates, on this kernel, a head whose
// traced syscall path really costs more (work attached where the syscall
// tracer takes its end timestamp) against the same scenario as base, in one
// job: a regression, decided before the budget is spent. With 3000
// instructions (p99 about 3× the base's) it was decided at the first look
// (round 6) here, but on CI one base trial at 0.75× the others' throughput
// held the first looks' intervals open to round 46; with 10000 a disturbed
// trial cannot bridge the gap. The round is logged, not asserted.
func TestGatePairCatchesRealSlowdown(t *testing.T) {
	env := matrixEnv{wrap: hook(slowHead(10000)), sysctlRoot: "/proc/sys"}
	var stdout, stderr strings.Builder
	err := runGate(t.Context(), []string{"syscall-read", "--variant", "base", "--variant", "head", "--duration", "300ms", "--warmup", "50ms"}, &stdout, &stderr, env)
	if code := exitCode(err); code != exitRegression {
		t.Fatalf("exit %d (%v), want 1\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	stop := regexp.MustCompile(`stopped after (\d+) rounds .*: every gated test decided`).FindStringSubmatch(stderr.String())
	if stop == nil {
		t.Errorf("want the gate to stop with every gated test decided:\n%s\n%s", stdout.String(), stderr.String())
	} else {
		t.Logf("regression decided after %s rounds", stop[1])
	}
	if !strings.Contains(stdout.String(), "syscall.read") {
		t.Errorf("report does not name syscall.read:\n%s", stdout.String())
	}
}
