package childproc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether process pid has ended (or is a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int, within time.Duration, what string) {
	t.Helper()
	for start := time.Now(); !gone(pid); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > within {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still runs %v on", what, pid, within)
		}
	}
}

const helperEnv = "CHILDPROC_TEST_PARENT"

// TestHelperParent is the parent TestStartDiesWithParent kills: it starts
// a child with Start, prints its pid, then ends threads of its own (as a
// goroutine locked to its thread does when it returns) and waits.
func TestHelperParent(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the parent of TestStartDiesWithParent")
	}
	cmd := exec.Command("sleep", "600")
	if err := Start(cmd); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for range 20 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // returns locked: the thread ends
		}()
		<-done
	}
	fmt.Println(cmd.Process.Pid)
	select {}
}

// TestStartDiesWithParent: a child of Start lives while its parent does,
// though threads of the parent end, and dies at once when the parent is
// killed outright.
func TestStartDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperParent$", "-test.count=1")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the parent said %q: %v", line, err)
	}
	time.Sleep(200 * time.Millisecond)
	if gone(pid) {
		t.Fatal("the child died while its parent lives, its threads ending")
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	waitGone(t, pid, time.Second, "the child of a parent killed outright")
}

// TestGroupEndsWhatTheShellStarted: a cancelled command ends whole, what
// its shell started in the background included, not only the shell.
func TestGroupEndsWhatTheShellStarted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 600 & echo $! > "+pidFile+"; wait")
	Group(cmd, syscall.SIGTERM, 5*time.Second)
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	var bg int
	for deadline := time.Now().Add(10 * time.Second); bg == 0; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		bg, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if bg == 0 && time.Now().After(deadline) {
			t.Fatal("the shell wrote no pid")
		}
	}
	cancel()
	start := time.Now()
	cmd.Wait()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Wait returned %v after the cancel", d)
	}
	waitGone(t, bg, time.Second, "the shell's background sleep")
}
