package history

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildKernelEndsWholeOnInterrupt: history confirm --build ran the
// build's shell with exec.CommandContext, whose cancel (tailgate's SIGINT
// or SIGTERM) killed the shell alone: its make and compilers ran on. Now
// the whole build ends, at once.
func TestBuildKernelEndsWholeOnInterrupt(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := BuildKernel(ctx, "sleep 600 & echo $! > "+pidFile+"; wait", "c0ffee", filepath.Join(dir, "out"), io.Discard)
		done <- err
	}()
	var bg int
	for deadline := time.Now().Add(10 * time.Second); bg == 0; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		bg, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if bg == 0 && time.Now().After(deadline) {
			t.Fatal("the build wrote no pid")
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("BuildKernel after the interrupt: %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("BuildKernel still runs 2 s after the interrupt")
	}
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(bg), "stat"))
		if i := bytes.LastIndexByte(b, ')'); err != nil || i+2 < len(b) && b[i+2] == 'Z' {
			break
		}
		if time.Since(start) > time.Second {
			syscall.Kill(bg, syscall.SIGKILL)
			t.Fatalf("the build's background sleep (pid %d) still runs a second after the interrupt", bg)
		}
	}
}
