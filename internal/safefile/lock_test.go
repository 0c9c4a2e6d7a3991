package safefile

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
)

// holdLock has another process, flock(1), hold the exclusive lock of
// path until the test ends.
func holdLock(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock(1)")
	}
	// -o: the lock is flock's own, not its sleep's, so that killing
	// flock releases it; the group goes too.
	cmd := exec.Command("flock", "-o", "-x", path, "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == unix.EWOULDBLOCK {
			return cmd
		}
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	t.Fatal("flock(1) did not take the lock in 10s")
	return nil
}

// TestLockEnds: a lock another process holds is waited for only until the
// context ends (what SIGINT and SIGTERM do to main's) or the wait has
// passed, and the error names the holder as the kernel knows it, not as
// the lock file says.
func TestLockEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := holdLock(t, path)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("1\n") // a holder's word is not taken

	var saw Holder
	start := time.Now()
	err = Lock(context.Background(), f, unix.LOCK_EX, 300*time.Millisecond, func(h Holder) { saw = h })
	var le *LockError
	if !errors.As(err, &le) || !errors.Is(err, ErrLockTimeout) || time.Since(start) > 5*time.Second {
		t.Fatalf("Lock past its wait = %v after %v, want ErrLockTimeout at once", err, time.Since(start))
	}
	if le.Holder.PID != cmd.Process.Pid || saw.PID != cmd.Process.Pid || le.Holder.Command != "flock" || le.Holder.UID != os.Getuid() {
		t.Errorf("holder %+v (waiting saw %+v), want pid %d, flock, uid %d", le.Holder, saw, cmd.Process.Pid, os.Getuid())
	}
	if msg := err.Error(); !strings.Contains(msg, "still locked") || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	err = Lock(ctx, f, unix.LOCK_EX, time.Hour, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second || !strings.Contains(err.Error(), "interrupted while waiting") {
		t.Errorf("Lock when the context ends = %v after %v, want it interrupted at once", err, time.Since(start))
	}

	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if err := Lock(context.Background(), f, unix.LOCK_EX, time.Second, nil); err != nil {
		t.Errorf("Lock once the holder is gone: %v", err)
	}
}
