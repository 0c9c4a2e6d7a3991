package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/proc"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// execScenario parses a scenario of an exec workload whose programs carry
// a marker in their environment, and returns it and the marker.
func execScenario(t *testing.T, workload, rest string) (*scenarios.Scenario, string) {
	t.Helper()
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	m := fmt.Sprintf("m%x", rand.Uint64())
	src := "name: exec-test\nworkload:\n  kind: exec\n" + workload +
		"\n  env: {TAILGATE_TEST_MARKER: " + m + "}\n" + rest
	s, err := scenarios.Parse(filepath.Join(t.TempDir(), "exec.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// leftovers returns the live processes whose environment holds marker m.
func leftovers(m string) []int {
	needle := []byte("TAILGATE_TEST_MARKER=" + m + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
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

// groupsNow returns the groups under the tailgate parent.
func groupsNow(t *testing.T) []string {
	t.Helper()
	gs, err := cgroup.Owned()
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// checkNothingLeft fails t if a process of marker m, or a tailgate group
// that was not there before, is left. Other tailgate runs on the machine
// make groups of their own: a group of a live process other than this one
// and its workers is theirs, and a stale one gets a moment to be removed
// by its run.
func checkNothingLeft(t *testing.T, m string, before []string) {
	t.Helper()
	if pids := leftovers(m); len(pids) > 0 {
		t.Errorf("processes left running: %v", pids)
	}
	ours := func() []string {
		var left []string
		for _, g := range groupsNow(t) {
			if slices.Contains(before, g) {
				continue
			}
			owner, err := strconv.Atoi(strings.SplitN(filepath.Base(g), ".", 2)[0])
			if err != nil || owner == os.Getpid() || parentPID(owner) == os.Getpid() || parentPID(owner) == 0 {
				left = append(left, g)
			}
		}
		return left
	}
	left := ours()
	for deadline := time.Now().Add(2 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = ours() {
		time.Sleep(50 * time.Millisecond)
	}
	for _, g := range left {
		t.Errorf("cgroup left: %s", g)
	}
}

func readCounts(t *testing.T, res *result.Result, metric string) []uint64 {
	t.Helper()
	s := res.Find("exec-test")
	if s == nil || s.Metrics[metric] == nil {
		t.Fatalf("no %s in the result", metric)
	}
	var n []uint64
	for _, tr := range s.Metrics[metric].Trials {
		n = append(n, tr.Summary.Count)
	}
	return n
}

// dd's reads are counted, a few of its own while it loads included, and
// none of this process's, which reads all the while.
func TestExecCountsItsGroup(t *testing.T) {
	const n = 20000
	s, m := execScenario(t, "  command: [dd, if=/dev/zero, of=/dev/null, bs=4096, count=20000]",
		"tracers:\n  syscall: {syscalls: [read]}\ntrials: 2\nwarmup: 0s\nduration: 20s\n")
	before := groupsNow(t)
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f, err := os.Open("/dev/zero")
		if err != nil {
			panic(err)
		}
		defer f.Close()
		buf := make([]byte, 4096)
		reads := 0
		for {
			select {
			case <-stop:
				done <- reads
				return
			default:
			}
			syscall.Read(int(f.Fd()), buf)
			reads++
		}
	}()
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}, InProcess: true})
	close(stop)
	own := <-done
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range readCounts(t, res, "syscall.read") {
		if got < n || got > n+20 {
			t.Errorf("trial %d: counted %d reads; dd made %d (and a few loading), this process %d", i+1, got, n, own)
		}
	}
	if own < n {
		t.Logf("this process read only %d times meanwhile", own)
	}
	if tr := res.Scenarios[0].Tracers; len(tr) == 0 {
		t.Error("no tracer recorded")
	}
	checkNothingLeft(t, m, before)
}

// The group is counted whole: a child the command forks, a daemon that
// outlives it, a pipeline. Each trial is a worker process of its own.
func TestExecCountsWhatItStarts(t *testing.T) {
	tests := []struct {
		name, command string
		reads         uint64 // without dd's few while it loads
	}{
		{"forked child", `[sh, -c, "dd if=/dev/zero of=/dev/null bs=4096 count=5000 2>/dev/null & wait"]`, 5000},
		{"double-forked daemon", `[sh, -c, "(dd if=/dev/zero of=/dev/null bs=4096 count=5000 2>/dev/null &); exit 0"]`, 5000},
		{"pipeline", `[sh, -c, "dd if=/dev/zero bs=4096 count=5000 2>/dev/null | dd of=/dev/null bs=4096 2>/dev/null"]`, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := execScenario(t, "  command: "+tt.command,
				"tracers:\n  syscall: {syscalls: [read]}\ntrials: 1\nwarmup: 0s\nduration: 20s\n")
			before := groupsNow(t)
			res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}})
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range readCounts(t, res, "syscall.read") {
				if got < tt.reads || got > tt.reads+40 {
					t.Errorf("counted %d reads, want %d and a few", got, tt.reads)
				}
			}
			checkNothingLeft(t, m, before)
		})
	}
}

// Whatever path a run takes, it leaves no process and no group behind.
func TestExecLeavesNothing(t *testing.T) {
	hang := `[sh, -c, "trap '' INT TERM HUP; sleep 1000 & sleep 1000; wait"]`
	tests := []struct {
		name, workload string
		duration       string
		cancelAfter    time.Duration // 0: not interrupted
		wantErr        string        // "" for success, "canceled" for an interruption
	}{
		{"a trial's end", "  command: " + hang, "300ms", 0, ""},
		{"a hanging load", "  command: [sleep, '1000']\n  load: " + hang, "300ms", 0, ""},
		{"interrupted while it hangs", "  command: " + hang, "1m", 500 * time.Millisecond, "canceled"},
		{"interrupted while not ready", "  command: " + hang + "\n  ready: {file: /nonexistent, timeout: 1m}", "1s", 500 * time.Millisecond, "canceled"},
		{"never ready", "  command: " + hang + "\n  ready: {port: 1, timeout: 300ms}", "1s", 0, "not ready after 300ms"},
		{"failing setup", "  command: " + hang + "\n  setup: [sh, -c, 'sleep 1000 & exit 1']", "1s", 0, "setup sh -c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := execScenario(t, tt.workload, "tracers:\n  sched: {}\ntrials: 2\nwarmup: 0s\nduration: "+tt.duration+"\n")
			before := groupsNow(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			start := time.Now()
			_, err := Run(ctx, Request{Scenarios: []*scenarios.Scenario{s}})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr == "canceled" && !errors.Is(err, context.Canceled):
				t.Fatalf("error %v, want the interruption", err)
			case tt.wantErr != "" && tt.wantErr != "canceled" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one holding %q", err, tt.wantErr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			checkNothingLeft(t, m, before)
		})
	}
}

// A worker killed outright cannot clean up: the parent removes its group
// and kills what runs there.
func TestExecWorkerKilled(t *testing.T) {
	s, m := execScenario(t, `  command: [sh, -c, "sleep 1000 & sleep 1000"]`, "tracers:\n  sched: {}\ntrials: 1\nwarmup: 0s\nduration: 1m\n")
	before := groupsNow(t)
	go func() {
		// Once the command runs, kill its worker: the parent of its shell.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, pid := range leftovers(m) {
				if ppid := parentPID(pid); ppid > 0 && parentPID(ppid) == os.Getpid() {
					syscall.Kill(ppid, syscall.SIGKILL)
					return
				}
			}
		}
	}()
	_, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}})
	if err == nil {
		t.Fatal("a killed worker's trial succeeded")
	}
	checkNothingLeft(t, m, before)
}

func parentPID(pid int) int {
	st, _ := proc.ReadStat(pid)
	return st.PPID
}
