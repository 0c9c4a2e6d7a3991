package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/blockdev"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// fsyncScratch is the fsync-scratch built-in with its loop device's
// backing file in dir.
func fsyncScratch(t *testing.T, dir string, trials int, d time.Duration) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Lookup("fsync-scratch")
	if err != nil {
		t.Fatal(err)
	}
	c := *s
	c.Trials, c.Duration, c.Warmup = trials, d, 0
	p := *c.Workload.Params.(*scenarios.Fsync)
	p.Dir = dir
	c.Workload.Params = &p
	return &c
}

// checkNoLoopIn fails t unless, within a few seconds, no loop device is
// bound to a file in dir and dir is empty.
func checkNoLoopIn(t *testing.T, dir, after string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var bound []string
		names, _ := filepath.Glob("/sys/block/loop*")
		for _, n := range names {
			if b := blockdev.Bound(filepath.Base(n)); strings.HasPrefix(b, dir+"/") {
				bound = append(bound, filepath.Base(n)+": "+b)
			}
		}
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(bound) == 0 && len(es) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: loop devices %v still bound, %d entries in %s", after, bound, len(es), dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestScratchTrialLeavesNothing: each trial of fsync-scratch, in a worker
// of its own, records the loop device it wrote; neither a finished trial
// nor one interrupted (the worker gets SIGINT) leaves a loop device or a
// file behind.
func TestScratchTrialLeavesNothing(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	testenv.Need(t, testenv.LoopDevices)
	dir := t.TempDir()
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{fsyncScratch(t, dir, 2, 100*time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Find("fsync-scratch")
	if s == nil || s.Trials != 2 {
		t.Fatalf("want 2 trials of fsync-scratch, got %+v", s)
	}
	for i, tr := range s.Metrics["block.rq"].Trials {
		if d := tr.Device; d == nil || d.Kind != "loop" || !strings.HasPrefix(d.Name, "loop") || d.SizeBytes != 4096 {
			t.Errorf("trial %d: device %+v, want a loop device of 4096 bytes", i, tr.Device)
		}
		if tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops*105/100 {
			t.Errorf("trial %d: block.rq counted %d for %d fdatasyncs", i, tr.Summary.Count, tr.Ops)
		}
	}
	checkNoLoopIn(t, dir, "a run")

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Well into the trial: the worker has its loop device.
		time.Sleep(1500 * time.Millisecond)
		cancel()
	}()
	_, err = Run(ctx, Request{Scenarios: []*scenarios.Scenario{fsyncScratch(t, dir, 1, 30*time.Second)}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	checkNoLoopIn(t, dir, "an interrupted trial")
}

// noLoopEnv makes TestScratchSkippedWithoutLoop's body run: it is set in
// the process the test starts in a mount namespace of its own, where
// /dev/loop-control is /dev/null.
const noLoopEnv = "TAILGATE_TEST_NO_LOOP"

// TestScratchSkippedWithoutLoop: where there are no loop devices,
// fsync-scratch is an UnavailableError, and a run of every built-in
// (SkipUnsupported) passes over it with the reason.
func TestScratchSkippedWithoutLoop(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	if os.Getenv(noLoopEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestScratchSkippedWithoutLoop$", "-test.v")
		cmd.Env = append(os.Environ(), noLoopEnv+"=1")
		// Go makes the new namespace's mounts private: the bind mount
		// below is seen by nothing outside it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a mount namespace without loop devices: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestScratchSkippedWithoutLoop") {
			t.Fatalf("the test did not run in the namespace:\n%s", out)
		}
		return
	}
	if err := unix.Mount("/dev/null", blockdev.ControlPath, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind /dev/null over %s: %v", blockdev.ControlPath, err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{fsyncScratch(t, dir, 1, 100*time.Millisecond)}, SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Scenario != "fsync-scratch" {
		t.Fatalf("scenarios %d, skipped %+v: want fsync-scratch skipped", len(res.Scenarios), res.Skipped)
	}
	why := res.Skipped[0].Reason
	t.Logf("skipped: %s", why)
	if !strings.Contains(why, "no loop devices") || strings.Contains(why, "\n") {
		t.Errorf("reason %q: want one line saying there are no loop devices", why)
	}
	_, err = Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{fsyncScratch(t, dir, 1, 100*time.Millisecond)}})
	var ue *scenarios.UnavailableError
	if !errors.As(err, &ue) {
		t.Errorf("named run: %v, want a scenarios.UnavailableError", err)
	}
}
