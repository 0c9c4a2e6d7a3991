package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdStoreLock has another process, flock(1), hold the exclusive lock
// file path until the test ends, and returns its pid.
func holdStoreLock(t *testing.T, path string) int {
	t.Helper()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock(1)")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("flock", "-o", "-x", path, "sh", "-c", `touch "$0"; exec sleep 60`, ready)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return cmd.Process.Pid
		}
	}
	t.Fatal("flock(1) did not take the lock in 10s")
	return 0
}

// TestLockWaitsHeedSignals: baseline save and history add, waiting for a
// store's lock that another process holds, end at once on SIGINT or
// SIGTERM (which cancel main's context), exit 3 naming the holder, and
// write nothing. Once, baseline save waited the holder out and wrote
// anyway, and history add exited 3 only after the wait.
func TestLockWaitsHeedSignals(t *testing.T) {
	dir := t.TempDir()
	res := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "r.json")
	for _, c := range []struct {
		name, lock string
		args       []string
		written    string
	}{
		{"baseline save", filepath.Join(dir, "store", ".tailgate.lock"), []string{"baseline", "save", res, filepath.Join(dir, "store")}, filepath.Join(dir, "store", "*.json")},
		{"history add", filepath.Join(dir, "history", ".lock"), []string{"history", "add", filepath.Join(dir, "history"), res, "--commit", strings.Repeat("ab", 20)}, filepath.Join(dir, "history", "index*")},
	} {
		t.Run(c.name, func(t *testing.T) {
			pid := holdStoreLock(t, c.lock)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel) // as SIGINT or SIGTERM cancel main's
			start := time.Now()
			var o, e bytes.Buffer
			code := run(ctx, c.args, &o, &e)
			took := time.Since(start)
			if code != exitInfra || took > 5*time.Second || !strings.Contains(e.String(), "interrupted while waiting") || !strings.Contains(e.String(), "pid "+strconv.Itoa(pid)+` ("flock", uid `) {
				t.Errorf("exit %d after %v, stderr %q; want 3 at once, naming pid %d", code, took, e.String(), pid)
			}
			if m, _ := filepath.Glob(c.written); len(m) > 0 {
				t.Errorf("wrote %v while another held the lock", m)
			}
		})
	}
}
