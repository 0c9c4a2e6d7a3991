package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether process pid has ended: no longer there, or a
// zombie (dead, waiting to be reaped).
func gone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// readPID waits up to wait for file to hold a pid.
func readPID(t *testing.T, file string, wait time.Duration) int {
	t.Helper()
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after %v", file, wait)
		}
	}
}

// TestExecWorkloadDiesWithTailgate: an exec workload, and what it forked,
// outlived a SIGKILL of tailgate until the next run removed them. Killed
// outright, tailgate now takes its worker with it (the kernel's
// parent-death signal, from a thread that lives as long as the child),
// the worker its command, and the group guard what the command forked:
// all are gone within a second, and so is their cgroup, soon after.
func TestExecWorkloadDiesWithTailgate(t *testing.T) {
	bin := buildTailgate(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "linger.yaml")
	script := "echo $$ > " + dir + "/sh.pid; sleep 600 & echo $! > " + dir + "/bg.pid; wait"
	yaml := "name: linger\nworkload:\n  kind: exec\n  command: [sh, -c, " + strconv.Quote(script) + "]\ntracers:\n  sched: {}\nwarmup: 0s\nduration: 60s\ntrials: 1\n"
	if err := os.WriteFile(sc, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "run", sc, "-o", os.DevNull)
	cmd.Env = append(os.Environ(), "CI=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sh := readPID(t, filepath.Join(dir, "sh.pid"), 30*time.Second)
	bg := readPID(t, filepath.Join(dir, "bg.pid"), 5*time.Second)
	group, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(bg), "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	// "0::/tailgate/PID.START-SEQ/command-N"
	rel := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(group)), "0::"))
	if !strings.Contains(rel, "/tailgate/") {
		t.Fatalf("the workload's sleep is in cgroup %q, not one of tailgate's", rel)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	for !gone(sh) || !gone(bg) {
		if time.Since(killed) > time.Second {
			t.Fatalf("a second after tailgate's SIGKILL: its command (pid %d) gone: %v, what the command forked (pid %d) gone: %v\n%s", sh, gone(sh), bg, gone(bg), out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("workload gone %v after the SIGKILL", time.Since(killed).Round(time.Millisecond))
	path := filepath.Join("/sys/fs/cgroup", filepath.Dir(rel))
	for {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			break
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("cgroup %s still there 10 s after tailgate's SIGKILL", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
