package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// The examples of the README's "Your own workload", as shipped in
// testdata/exec.

func TestExampleShellPipeline(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	out := filepath.Join(t.TempDir(), "shell.json")
	code, _, stderr := runInProcess(t, "run", "../../testdata/exec/shell.yaml", "--trials", "2", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	s := loadResult(t, out).Find("sha256-pipe")
	if s == nil {
		t.Fatal("no sha256-pipe in the result")
	}
	for i, tr := range s.Metrics["syscall.write"].Trials {
		// dd's 2048 writes of 64 KiB into the pipe; sha256sum writes its
		// one line.
		if n := tr.Summary.Count; n < 2048 || n > 2048+20 {
			t.Errorf("trial %d: %d writes, want dd's 2048 and a few", i+1, n)
		}
	}
	for i, tr := range s.Metrics["syscall.read"].Trials {
		// dd's 2048 reads of /dev/zero, and sha256sum's of the pipe, at
		// least as many.
		if n := tr.Summary.Count; n < 2*2048 {
			t.Errorf("trial %d: %d reads, want at least 2×2048", i+1, n)
		}
	}
}

// The server and its client, in a scenario that names no tracers: the
// client's requests are the ops, and the server's requests are measured
// by default (request.server), each once; the client's ends of the
// connections, in the load's group, count none.
func TestExampleServerClient(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "../../testdata/exec/echo/server", "../../testdata/exec/echo/client")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	yaml, err := os.ReadFile("../../testdata/exec/echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Another port than the example's, so that a copy someone runs does
	// not collide with the test.
	port := strconv.Itoa(20000 + rand.IntN(20000))
	yaml = bytes.ReplaceAll(yaml, []byte("7071"), []byte(port))
	if err := os.WriteFile(filepath.Join(dir, "echo.yaml"), yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "echo.json")
	code, _, stderr := runInProcess(t, "run", filepath.Join(dir, "echo.yaml"), "--trials", "2", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	s := loadResult(t, out).Find("echo-server")
	if s == nil {
		t.Fatal("no echo-server in the result")
	}
	const requests = 5000 // the example's -n
	m := s.Metrics["request.server"]
	if m == nil || len(m.Trials) != 2 {
		t.Fatalf("want request.server measured in 2 trials, got %+v", m)
	}
	for i, tr := range m.Trials {
		if tr.Ops != requests {
			t.Errorf("trial %d: %d ops, want the client's %d ok lines", i+1, tr.Ops, requests)
		}
		// No warmup: every request of the trial is the client's.
		if n := tr.Summary.Count; n != requests {
			t.Errorf("trial %d: %d requests counted, want the client's %d", i+1, n, requests)
		}
	}
}

// The echo server under the built-in load: request.client holds about
// rate × duration requests a trial, the ops, and is what the scenario
// gates with no gate block.
func TestExampleBuiltinLoad(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "../../testdata/exec/echo/server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	yaml, err := os.ReadFile("../../testdata/exec/echo-rate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(20000 + rand.IntN(20000))
	yaml = bytes.ReplaceAll(yaml, []byte("7072"), []byte(port))
	if err := os.WriteFile(filepath.Join(dir, "echo-rate.yaml"), yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "echo-rate.json")
	code, _, stderr := runInProcess(t, "run", filepath.Join(dir, "echo-rate.yaml"), "--trials", "2", "--duration", "1s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	s := loadResult(t, out).Find("echo-rate")
	if s == nil {
		t.Fatal("no echo-rate in the result")
	}
	m := s.Metrics["request.client"]
	if m == nil || len(m.Trials) != 2 {
		t.Fatalf("request.client %+v, want 2 trials", m)
	}
	for i, tr := range m.Trials {
		// 2000/s for 1 s; a busy machine sends some late, not fewer.
		if n := tr.Summary.Count; n < 1900 || n > 2100 || tr.Ops != n {
			t.Errorf("trial %d: %d requests measured, %d ops; want about 2000 of each", i+1, n, tr.Ops)
		}
	}
	if g := s.Gate["request.client"]; g["p99"] == 0 {
		t.Errorf("gate %v, want p99 of request.client", s.Gate)
	}
}

// A load command's own latencies, from a recorded hey CSV, are each
// trial's request.client; a load that writes none by the trial's end
// fails the run, saying what to do.
func TestExecLatenciesEndToEnd(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	csv, err := filepath.Abs("../../internal/loadfile/testdata/hey.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, load string
		code       int
		want       string
	}{
		{"read", "[cat, " + csv + "]", 0, ""},
		{"none written", "[sleep, '1000']", 3, "trial 1 measured no request.client: the workload's load was still running at the trial's end (300ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scenario := filepath.Join(dir, tc.name+".yaml")
			yaml := "name: lat\nworkload:\n  kind: exec\n  command: [sleep, '1000']\n  ready: {file: /}\n  load: " + tc.load +
				"\n  latencies: {format: hey}\ntracers:\n  sched: {}\ntrials: 2\nwarmup: 0s\nduration: 300ms\n"
			if err := os.WriteFile(scenario, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, tc.name+".json")
			code, _, stderr := runInProcess(t, "run", scenario, "-o", out)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, stderr)
			}
			if tc.code != 0 {
				return
			}
			m := loadResult(t, out).Find("lat").Metrics["request.client"]
			if m == nil || len(m.Trials) != 2 || m.Trials[1].Summary.Count != 200 {
				t.Fatalf("request.client %+v, want 2 trials of hey's 200 requests", m)
			}
		})
	}
}

// markerEnv marks the processes of a test's exec workload.
const markerEnv = "TAILGATE_TEST_MARKER"

// marked returns the live processes whose environment holds marker m.
func marked(m string) []int {
	needle := []byte(markerEnv + "=" + m + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// ^C at the terminal: SIGINT to tailgate's whole process group while its
// command hangs, ignoring the signals it can. tailgate exits 3, and
// leaves no process and no group behind.
func TestExecInterruptLeavesNothing(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	bin := buildTailgate(t)
	m := fmt.Sprintf("m%x", rand.Uint64())
	dir := t.TempDir()
	scenario := filepath.Join(dir, "hang.yaml")
	if err := os.WriteFile(scenario, []byte(`name: hang
workload:
  kind: exec
  command: [sh, -c, "trap '' INT TERM HUP; sleep 1000 & sleep 1000; wait"]
  env: {`+markerEnv+`: `+m+`}
tracers:
  sched: {}
trials: 3
warmup: 0s
duration: 1m
`), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := cgroup.Owned()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", scenario, "-o", filepath.Join(dir, "hang.json"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for deadline := time.Now().Add(30 * time.Second); len(marked(m)) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start:\n%s", stderr.String())
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInfra {
			t.Errorf("tailgate exited %v, want exit %d (interrupted)\n%s", err, exitInfra, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("tailgate still running 20 s after SIGINT:\n%s", stderr.String())
	}
	if pids := marked(m); len(pids) > 0 {
		t.Errorf("processes left running: %v", pids)
	}
	after, err := cgroup.Owned()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range after {
		owner, _ := strconv.Atoi(strings.SplitN(filepath.Base(g), ".", 2)[0])
		if !slices.Contains(before, g) && !processRuns(owner) {
			t.Errorf("cgroup left: %s", g)
		}
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
}

func processRuns(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return pid > 0 && err == nil
}

// A scenario that needs this host's programs is refused for a VM before
// anything is fetched or booted: exit 2, saying why.
func TestHostOnlyScenarioInVM(t *testing.T) {
	cache := t.TempDir() // empty: a fetch would show as files here
	for file, why := range map[string]string{
		"../../testdata/exec/shell.yaml":              "workload kind exec",
		"../../bpf/ufunc/testdata/ufunc-sleeper.yaml": "tracer ufunc",
	} {
		start := time.Now()
		code, _, stderr := runInProcess(t, "run", file, "--kernel", "debian:6.1-cloud", "--kernel-cache", cache)
		if code != exitUsage || !strings.Contains(stderr, "cannot run in a VM (") || !strings.Contains(stderr, why) {
			t.Errorf("%s: exit %d, %q; want %d saying it cannot run in a VM (%s...)", file, code, stderr, exitUsage, why)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refused after %v: something was fetched or booted first", file, d)
		}
		if n := strings.Count(stderr, "\n"); n > 1 {
			t.Errorf("%s: %d lines, want one:\n%s", file, n, stderr)
		}
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("the kernel cache got %d entries: a kernel was fetched", len(ents))
	}
}

// A timer's cpus naming a CPU the target does not have is bad input, said
// in one line before anything runs or boots: exit 2.
func TestTimerCPUsNotThere(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(sc, []byte("name: t\nworkload: {kind: timer, cpus: 1000}\ntrials: 1\nduration: 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", sc, "-o", "-"},
		{"run", sc, "--kernel", "debian:6.1-cloud", "--kernel-cache", t.TempDir()},
	} {
		code, _, stderr := runInProcess(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "CPU 1000") || strings.Count(stderr, "\n") > 1 {
			t.Errorf("%v: exit %d, %q; want %d in one line naming CPU 1000", args, code, stderr, exitUsage)
		}
	}
}

// TestExecTeardownFailureIsExit3: a teardown that fails (the state it
// should restore is not restored) fails the run with exit 3, naming it,
// instead of exit 0.
func TestExecTeardownFailureIsExit3(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	file := filepath.Join(t.TempDir(), "teardown.yaml")
	src := "name: teardown-fails\nworkload:\n  kind: exec\n  command: [true]\n  teardown: [sh, -c, \"echo cannot restore >&2; exit 7\"]\n" +
		"tracers:\n  syscall: {syscalls: [read]}\ntrials: 1\nwarmup: 0s\nduration: 1s\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runInProcess(t, "run", file)
	if code != exitInfra || !strings.Contains(stderr, "teardown") || !strings.Contains(stderr, "exit status 7") {
		t.Errorf("exit %d, want %d naming the teardown and its status:\n%s", code, exitInfra, stderr)
	}
}
