package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// readSyscalls returns how many read syscalls process pid has made, as the
// kernel counts them (syscr of /proc/PID/io): the ground truth.
func readSyscalls(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "syscr: "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no syscr in /proc/%d/io", pid)
	return 0
}

// pacedReaderEnv makes this test binary a paced reader (see init).
const pacedReaderEnv = "TAILGATE_TEST_PACED_READER"

// A paced reader reads /dev/zero 200 times every 2 ms, until killed: a
// steady rate, well below that of a reader in a closed loop.
func init() {
	if os.Getenv(pacedReaderEnv) != "1" {
		return
	}
	f, err := os.Open("/dev/zero")
	if err != nil {
		os.Exit(3)
	}
	buf := make([]byte, 512)
	for next := time.Now(); ; {
		for range 200 {
			syscall.Read(int(f.Fd()), buf)
		}
		next = next.Add(2 * time.Millisecond)
		time.Sleep(time.Until(next))
	}
}

// pacedReader starts a paced reader, in group g unless g is nil.
func pacedReader(t *testing.T, g *cgroup.Group) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), pacedReaderEnv+"=1")
	return start(t, cmd, g)
}

// busyReader starts dd reading /dev/zero in a closed loop, far faster than
// a paced reader: the process not to count.
func busyReader(t *testing.T) *exec.Cmd {
	t.Helper()
	return start(t, exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=100000000000"), nil)
}

func start(t *testing.T, cmd *exec.Cmd, g *cgroup.Group) *exec.Cmd {
	t.Helper()
	var err error
	if g != nil {
		err = g.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func loadResult(t *testing.T, path string) *result.Result {
	t.Helper()
	res, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// counted returns the syscall.read count of scenario syscall-read's one
// trial in the Result at path.
func counted(t *testing.T, path string) uint64 {
	t.Helper()
	s := loadResult(t, path).Find("syscall-read")
	if s == nil || s.Metrics["syscall.read"] == nil || len(s.Metrics["syscall.read"].Trials) != 1 {
		t.Fatalf("no trial of syscall.read in %s", path)
	}
	return s.Metrics["syscall.read"].Trials[0].Summary.Count
}

// checkRate checks that got, the reads counted in a trial of d, are those
// of a paced reader (or tree) that read made times in a window of elapsed
// that holds the trial: about made/elapsed*d. The busy reader beside it,
// counted too, would put got far above made.
func checkRate(t *testing.T, got, made uint64, elapsed, d time.Duration) {
	t.Helper()
	want := float64(made) * d.Seconds() / elapsed.Seconds()
	t.Logf("counted %d reads in %v; the process made %d in %v around it, about %.0f in %v (%.2f)", got, d, made, elapsed.Round(time.Millisecond), want, d, float64(got)/want)
	if got > made || float64(got) < want/2 {
		t.Errorf("counted %d reads in %v; the measured process made %d in %v around it, about %.0f in %v", got, d, made, elapsed.Round(time.Millisecond), want, d)
	}
}

// TestRunPID measures a process started here while another, busier,
// reads beside it: its reads count, the other's and tailgate's do not. The
// kernel's own count of the process's reads over a window that holds the
// trial bounds what may be counted.
func TestRunPID(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	target := pacedReader(t, nil)
	busyReader(t)
	out := filepath.Join(t.TempDir(), "pid.json")
	start := time.Now()
	before := readSyscalls(t, target.Process.Pid)
	code, _, stderr := runInProcess(t, "run", "syscall-read", "--pid", strconv.Itoa(target.Process.Pid), "--trials", "1", "--duration", "500ms", "-o", out)
	after := readSyscalls(t, target.Process.Pid)
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	checkRate(t, counted(t, out), after-before, elapsed, 500*time.Millisecond)
	s := loadResult(t, out).Find("syscall-read")
	if s.Metrics["syscall.read"].Trials[0].PID == target.Process.Pid {
		t.Error("the trial's pid is the measured process's, not the worker's")
	}
	var def struct {
		Workload struct {
			Kind string `json:"kind"`
			PID  int    `json:"pid"`
		} `json:"workload"`
	}
	if err := json.Unmarshal(s.Definition, &def); err != nil || def.Workload.Kind != "attach" || def.Workload.PID != target.Process.Pid {
		t.Errorf("the Result's scenario does not say what it attached to: %s", s.Definition)
	}
}

// A process tree: the shell's child, a paced reader, was forked before
// tailgate attached and is counted as the shell is.
func TestRunPIDTree(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	sh := exec.Command("sh", "-c", os.Args[0]+" & wait")
	sh.Env = append(os.Environ(), pacedReaderEnv+"=1")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
		sh.Wait()
	}()
	var child int
	for deadline := time.Now().Add(5 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cs := childrenOf(sh.Process.Pid); len(cs) > 0 {
			child = cs[0]
		}
	}
	if child == 0 {
		t.Fatal("the shell forked no reader")
	}
	busyReader(t)
	out := filepath.Join(t.TempDir(), "tree.json")
	start := time.Now()
	before := readSyscalls(t, child) + readSyscalls(t, sh.Process.Pid)
	code, _, stderr := runInProcess(t, "run", "syscall-read", "--pid", strconv.Itoa(sh.Process.Pid), "--trials", "1", "--duration", "500ms", "-o", out)
	after := readSyscalls(t, child) + readSyscalls(t, sh.Process.Pid)
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	checkRate(t, counted(t, out), after-before, elapsed, 500*time.Millisecond)
}

// --cgroup counts a group's tasks, made outside tailgate's own.
func TestRunCgroup(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	mount, err := cgroup.Mount()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mount, fmt.Sprintf("tailgate-test-%x", rand.Uint32()))
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	target := pacedReader(t, g)
	busyReader(t)
	out := filepath.Join(t.TempDir(), "cgroup.json")
	start := time.Now()
	before := readSyscalls(t, target.Process.Pid)
	code, _, stderr := runInProcess(t, "run", "syscall-read", "--cgroup", strings.TrimPrefix(path, mount), "--trials", "1", "--duration", "500ms", "-o", out)
	after := readSyscalls(t, target.Process.Pid)
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	checkRate(t, counted(t, out), after-before, elapsed, 500*time.Millisecond)
}

func TestRunAttachBadInput(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	noTracers := filepath.Join(t.TempDir(), "timer.yaml")
	if err := os.WriteFile(noTracers, []byte("name: t\nworkload: {kind: timer}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own, err := cgroup.New()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Remove()
	// A live process outside tailgate's ancestry (pid 1 is refused).
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no such process", []string{"--pid", strconv.Itoa(dead.Process.Pid)}, fmt.Sprintf("--pid %d: no such process; give a running process", dead.Process.Pid)},
		{"not a pid", []string{"--pid", "abc"}, `invalid value "abc" for flag -pid: want a process id`},
		{"tailgate itself", []string{"--pid", strconv.Itoa(os.Getpid())}, "is this tailgate"},
		{"no such group", []string{"--cgroup", "/no/such/group"}, "--cgroup: cgroup /no/such/group: no such file or directory; give a directory of the cgroup v2 hierarchy"},
		{"not a group", []string{"--cgroup", "/tmp"}, "not in the cgroup v2 hierarchy"},
		{"tailgate's own group", []string{"--cgroup", own.Path}, "is a group tailgate makes for its own runs"},
		{"both", []string{"--pid", "1", "--cgroup", "/"}, "--pid and --cgroup both given"},
		{"in a VM", []string{"--pid", "1", "--vm"}, "--pid measures what runs on this machine; drop --kernel, --target and --vm"},
		{"nothing to trace", []string{noTracers, "--pid", strconv.Itoa(sleeper.Process.Pid)}, "scenario t has no tracers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !strings.HasSuffix(args[0], ".yaml") {
				args = append([]string{"syscall-read"}, args...)
			}
			code, stdout, stderr := runInProcess(t, append([]string{"run"}, args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q, want one line holding %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}

// TestAttachRefusesOwnTree: --pid of an ancestor of tailgate (pid 1, the
// shell that started it) or --cgroup of a group tailgate is in would
// measure tailgate's own trial workers: exit 2 in one line, before any
// run.
func TestAttachRefusesOwnTree(t *testing.T) {
	calls := stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result())
	own, err := cgroup.PathOf(os.Getpid())
	if err != nil {
		t.Fatalf("needs cgroup v2: %v", err)
	}
	mount, _ := cgroup.Mount()
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"pid 1", []string{"--pid", "1"}, "is an ancestor of this tailgate"},
		{"parent shell", []string{"--pid", strconv.Itoa(os.Getppid())}, "is an ancestor of this tailgate"},
		{"cgroup root", []string{"--cgroup", "/"}, "holds this tailgate"},
		{"cgroup root by its mount", []string{"--cgroup", mount}, "holds this tailgate"},
		{"own cgroup", []string{"--cgroup", own}, "holds this tailgate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			*calls = 0
			code, _, stderr := cli(append([]string{"run", "syscall-read", "--trials", "1", "--duration", "100ms"}, c.args...)...)
			if code != exitUsage || *calls != 0 || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d after %d runs, want %d before any and one line saying %q:\n%s", code, *calls, exitUsage, c.msg, stderr)
			}
		})
	}
}

// TestEmptyFlagsRefused: -o "" and --cgroup "" (an unset variable) are
// exit 2, not taken as "no file" and "no group".
func TestEmptyFlagsRefused(t *testing.T) {
	calls := stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result())
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"run -o", []string{"run", "syscall-read", "-o", ""}, "-o is empty"},
		{"run -o=", []string{"run", "syscall-read", "-o="}, "-o is empty"},
		{"run --cgroup", []string{"run", "syscall-read", "--cgroup", ""}, "--cgroup is empty"},
		{"gate -o", []string{"gate", "syscall-read", "--baseline", t.TempDir(), "-o", ""}, "-o is empty"},
		{"merge -o", []string{"merge", "x.json", "-o", ""}, "-o is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			*calls = 0
			code, _, stderr := cli(c.args...)
			if code != exitUsage || *calls != 0 || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d after %d runs, want %d before any and one line saying %q:\n%s", code, *calls, exitUsage, c.msg, stderr)
			}
		})
	}
}
