package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// buildTailgate builds the binary once per test binary run.
func buildTailgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tailgate")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runInProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// progIDsOf returns the BPF program IDs a process holds open, from its
// fdinfo.
func progIDsOf(pid int) []ebpf.ProgramID {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fdinfo")
	ents, _ := os.ReadDir(dir)
	var ids []ebpf.ProgramID
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "prog_id:"); ok {
				if id, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					ids = append(ids, ebpf.ProgramID(id))
				}
			}
		}
	}
	return ids
}

// treeProgIDs is progIDsOf for pid and its children (the trial workers
// hold the tracers), polled for up to wait until some are found.
func treeProgIDs(pid int, wait time.Duration) []ebpf.ProgramID {
	deadline := time.Now().Add(wait)
	for {
		ids := progIDsOf(pid)
		for _, c := range childrenOf(pid) {
			ids = append(ids, progIDsOf(c)...)
		}
		if len(ids) > 0 || time.Now().After(deadline) {
			return ids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesOf lists the live processes running the program at path.
func processesOf(path string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			out = append(out, pid)
		}
	}
	return out
}

// childrenOf lists the live child processes of pid.
func childrenOf(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if c, err := strconv.Atoi(f); err == nil {
			out = append(out, c)
		}
	}
	// Children of the other threads of pid.
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		if t.Name() == strconv.Itoa(pid) {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestRunWritesResult(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runInProcess(t, "run", "syscall-read", "--trials", "2", "--duration", "300ms", "--warmup", "100ms", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Find("syscall-read")
	if s == nil {
		t.Fatalf("no syscall-read scenario in %s", out)
	}
	if s.Trials != 2 {
		t.Errorf("trials %d, want 2", s.Trials)
	}
	m := s.Metrics["syscall.read"]
	if m == nil || len(m.Trials) != 2 {
		t.Fatalf("syscall.read metric missing or wrong trial count: %+v", m)
	}
	// Each trial is its own worker process, which is neither this one
	// nor another trial's.
	if a, b := m.Trials[0].PID, m.Trials[1].PID; a == 0 || b == 0 || a == b || a == os.Getpid() || b == os.Getpid() {
		t.Errorf("trial pids %d and %d (this process %d): want two distinct worker processes", a, b, os.Getpid())
	}
	for i, tr := range m.Trials {
		if len(tr.CPUs) != 1 {
			t.Errorf("trial %d: CPUs %v, want the one CPU its thread was pinned to", i, tr.CPUs)
		}
		// The tracer must see (nearly) every read the workload made, and
		// not many more.
		if tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops+tr.Ops/100+100 {
			t.Errorf("trial %d: tracer counted %d reads, workload made %d", i, tr.Summary.Count, tr.Ops)
		}
		if tr.TracerCostNs <= 0 {
			t.Errorf("trial %d: no tracer cost recorded", i)
		}
	}
	if r.Environment.KernelRelease == "" || r.Environment.CPUs == 0 {
		t.Errorf("environment not recorded: %+v", r.Environment)
	}
	for _, col := range []string{"metric", "p50", "p99.9", "syscall.read"} {
		if !strings.Contains(stdout, col) {
			t.Errorf("table lacks %q:\n%s", col, stdout)
		}
	}
}

func TestRunBadScenarioExit2(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nworkload:\n  kind: sycall\n"), 0o644)
	code, _, stderr := runInProcess(t, "run", bad)
	if code != exitUsage {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
	}
	if !strings.Contains(stderr, bad+":3:") {
		t.Errorf("error does not name file:line: %s", stderr)
	}
	code, _, stderr = runInProcess(t, "run", "no-such-scenario")
	if code != exitUsage {
		t.Errorf("unknown scenario: exit %d, want %d; stderr: %s", code, exitUsage, stderr)
	}
	code, _, _ = runInProcess(t, "run", "--trials", "x")
	if code != exitUsage {
		t.Errorf("bad flag: exit %d, want %d", code, exitUsage)
	}
}

func TestListNamesEveryBuiltin(t *testing.T) {
	code, stdout, stderr := runInProcess(t, "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"syscall-read", "syscall-write", "pipe-pingpong", "timer-1ms", "fork-exit", "runq-under-noise",
		"sched.runq", "timer.lateness", "syscall.<name>"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

// TestRunSIGINT interrupts a running `tailgate run`: it must exit 3, keep
// the trials already measured in a partial Result, and leave no BPF program
// behind.
func TestRunSIGINT(t *testing.T) {
	bin := buildTailgate(t)
	out := filepath.Join(t.TempDir(), "partial.json")
	cmd := exec.Command(bin, "run", "pipe-pingpong", "--trials", "50", "--duration", "300ms", "--warmup", "0s", "-o", out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var ids []ebpf.ProgramID
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "trial 2/50 done") {
			ids = treeProgIDs(cmd.Process.Pid, 3*time.Second)
			break
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no BPF programs held by tailgate while running; stderr:\n%s", log.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInfra {
		t.Errorf("exit %d after SIGINT, want %d (%v); stderr:\n%s", code, exitInfra, err, log.String())
	}
	left, err := tracing.StillLoaded(ids, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("programs %v outlived tailgate", left)
	}
	if left := processesOf(bin); len(left) > 0 {
		t.Errorf("processes %v of %s outlived tailgate", left, bin)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatalf("partial result: %v\nstderr:\n%s", err, log.String())
	}
	if !r.Partial || len(r.Scenarios) != 1 || r.Scenarios[0].Trials < 2 {
		t.Errorf("partial result: partial=%v scenarios=%d trials=%v", r.Partial, len(r.Scenarios), r.Scenarios)
	}
}

// TestRunWithoutPrivileges runs tailgate as an unprivileged user: one line
// naming the missing capabilities, exit 3.
func TestRunWithoutPrivileges(t *testing.T) {
	bin := buildTailgate(t)
	for d := filepath.Dir(bin); d != "/" && d != "."; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
			os.Chmod(d, 0o755)
		}
	}
	cmd := exec.Command(bin, "run", "syscall-read", "--trials", "1", "--duration", "100ms")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitInfra {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitInfra, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "CAP_BPF") {
		t.Errorf("want one line naming CAP_BPF, got:\n%s", msg)
	}
}
