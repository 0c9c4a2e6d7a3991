//go:build linux && amd64

package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// marked returns an exec workload whose programs carry a marker in their
// environment, and the marker, for leftovers to be found by.
func marked(e Exec) (Workload, string) {
	m := fmt.Sprintf("m%x", rand.Uint64())
	e.Env = map[string]string{"TAILGATE_TEST_MARKER": m}
	return Workload{Kind: "exec", Params: &e}, m
}

// leftovers returns the pids of live processes whose environment holds
// marker m.
func leftovers(m string) []int {
	needle := []byte("TAILGATE_TEST_MARKER=" + m + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue // dead, waiting to be reaped
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// checkClean fails t if a process of marker m or a group of this process
// is left.
func checkClean(t *testing.T, m string) {
	t.Helper()
	if pids := leftovers(m); len(pids) > 0 {
		t.Errorf("processes left running: %v", pids)
	}
	if gs, err := cgroup.OwnedBy(os.Getpid()); err != nil || len(gs) > 0 {
		t.Errorf("cgroups left: %v %v", gs, err)
	}
}

func newExec(t *testing.T, w Workload) Runner {
	t.Helper()
	r, err := NewWorkload(w)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExecOpsAndCleanup(t *testing.T) {
	needCgroups(t)
	w, m := marked(Exec{Command: []string{"sh", "-c", "for i in 1 2 3; do echo ok $i; done; echo not this"}, Ops: "^ok"})
	r := newExec(t, w)
	tasks, ok := TasksOf(r)
	if !ok || tasks.CgroupID == 0 || tasks.PID != 0 {
		t.Errorf("TasksOf = %+v, %v; want the workload's group", tasks, ok)
	}
	st, err := r.Run(context.Background()) // ends when the command does
	if err != nil {
		t.Fatal(err)
	}
	if st.Ops != 3 {
		t.Errorf("ops %d, want the 3 lines matching ^ok", st.Ops)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkClean(t, m)
	if _, err := os.Stat(tasks.Cgroup); !os.IsNotExist(err) {
		t.Errorf("group %s not removed: %v", tasks.Cgroup, err)
	}
}

func TestExecFailure(t *testing.T) {
	needCgroups(t)
	tests := []struct {
		name string
		e    Exec
		want []string
	}{
		{"command", Exec{Command: []string{"sh", "-c", "echo one >&2; echo two >&2; exit 3"}},
			[]string{`command sh -c "echo one >&2; echo two >&2; exit 3": exit status 3; last lines of its stderr:`, "\tone\n\ttwo"}},
		{"command killed", Exec{Command: []string{"sh", "-c", "kill -9 $$"}},
			[]string{"signal: killed"}},
		{"load", Exec{Command: []string{"sleep", "100"}, Load: []string{"sh", "-c", "echo refused >&2; exit 1"}},
			[]string{"load sh -c", "exit status 1", "\trefused"}},
		{"command dies under load", Exec{Command: []string{"sh", "-c", "sleep 0.1; echo crash >&2; exit 2"}, Load: []string{"sleep", "100"}},
			[]string{"command sh -c", "exit status 2", "\tcrash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, m := marked(tt.e)
			r := newExec(t, w)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := r.Run(ctx)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q\nwant it to hold %q", err, s)
				}
			}
			if ctx.Err() != nil {
				t.Error("the failure took the whole trial to be seen")
			}
			r.Close()
			checkClean(t, m)
		})
	}
}

// A command that ignores every signal it can and never exits, and a
// shell's child it left behind: the trial ends on time and nothing
// survives it.
func TestExecHangingCommand(t *testing.T) {
	needCgroups(t)
	w, m := marked(Exec{Command: []string{"sh", "-c", "trap '' TERM INT HUP QUIT; sleep 1000 & sleep 1000; wait"}})
	r := newExec(t, w)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.Run(ctx); err != nil {
		t.Fatalf("a command cut at the end of its trial is no failure: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v for a 300ms trial", d)
	}
	if pids := leftovers(m); len(pids) > 0 {
		t.Errorf("after the run: processes left %v", pids)
	}
	r.Close()
	checkClean(t, m)
}

// A command that forks a daemon and exits 0: the run lasts until the
// daemon is done, and counts its output.
func TestExecDaemon(t *testing.T) {
	needCgroups(t)
	w, m := marked(Exec{Command: []string{"sh", "-c", "(sleep 0.3; echo ok) & exit 0"}, Ops: "^ok$"})
	r := newExec(t, w)
	defer r.Close()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("run took %v; want it to last as long as the daemon, 300ms", d)
	}
	if st.Ops != 1 {
		t.Errorf("ops %d, want the daemon's line", st.Ops)
	}
	r.Close()
	checkClean(t, m)
}

func TestExecReady(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		e    Exec
		want string // "" when ready
	}{
		{"file appears", Exec{Command: []string{"sh", "-c", "sleep 0.2; touch ready; sleep 1000"}, Dir: dir,
			Ready: &Ready{File: "ready", Timeout: 5 * time.Second}}, ""},
		{"never ready", Exec{Command: []string{"sleep", "1000"}, Dir: dir,
			Ready: &Ready{File: "never", Timeout: 200 * time.Millisecond}}, "not ready after 200ms: " + filepath.Join(dir, "never") + " does not exist"},
		{"port never accepts", Exec{Command: []string{"sleep", "1000"},
			Ready: &Ready{Port: "127.0.0.1:1", Timeout: 200 * time.Millisecond}}, "not ready after 200ms: nothing accepts on 127.0.0.1:1"},
		{"exits first", Exec{Command: []string{"sh", "-c", "echo bye >&2"}, Dir: dir,
			Ready: &Ready{File: "never", Timeout: 5 * time.Second}}, "exited before it was ready; last lines of its stderr:\n\tbye"},
		{"fails first", Exec{Command: []string{"sh", "-c", "exit 4"}, Dir: dir,
			Ready: &Ready{File: "never", Timeout: 5 * time.Second}}, "exit status 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "ready"))
			w, m := marked(tt.e)
			r := newExec(t, w)
			err := Start(context.Background(), r)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
					t.Errorf("Start returned before the command was ready: %v", err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				if _, err := r.Run(ctx); err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start: %v\nwant an error holding %q", err, tt.want)
			}
			r.Close()
			checkClean(t, m)
		})
	}
}

// With load, command keeps running from one run to the next; load runs
// afresh each time and its lines are the ops.
func TestExecLoad(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	w, m := marked(Exec{
		Command: []string{"sh", "-c", "echo $$ > server.pid; touch ready; exec sleep 1000"},
		Dir:     dir,
		Ready:   &Ready{File: "ready", Timeout: 5 * time.Second},
		Load:    []string{"sh", "-c", "echo ok; echo ok; echo no"},
		Ops:     "^ok$",
	})
	r := newExec(t, w)
	var pids []string
	for run := range 2 {
		if err := Start(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		st, err := r.Run(context.Background()) // until load exits
		if err != nil {
			t.Fatal(err)
		}
		if st.Ops != 2 {
			t.Errorf("run %d: ops %d, want load's 2 lines matching", run, st.Ops)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "server.pid"))
		pids = append(pids, string(b))
	}
	if pids[0] != pids[1] || pids[0] == "" {
		t.Errorf("command pids %q: want one command for both runs", pids)
	}
	r.Close()
	checkClean(t, m)
}

// A run cut at its end (a warmup's, a trial's) while the command or the
// load still runs is no failure, and the next run starts them afresh and
// lets them finish: the warmup of a command that runs to completion is
// such a cut run (issue 19: dd running longer than the warmup failed the
// trial after it with "signal: killed").
func TestExecRunCutThenAgain(t *testing.T) {
	needCgroups(t)
	tests := []struct {
		name string
		e    Exec
		ops  uint64
	}{
		{"command", Exec{Command: []string{"sh", "-c", "sleep 0.3; echo ok"}, Ops: "^ok$"}, 1},
		{"load", Exec{Command: []string{"sleep", "1000"}, Load: []string{"sh", "-c", "sleep 0.3; echo ok"}, Ops: "^ok$"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, m := marked(tt.e)
			r := newExec(t, w)
			for run, d := range []time.Duration{50 * time.Millisecond, 10 * time.Second, 50 * time.Millisecond, 10 * time.Second} {
				if err := Start(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), d)
				start := time.Now()
				st, err := r.Run(ctx)
				took := time.Since(start)
				cancel()
				if err != nil {
					t.Fatalf("run %d (%v): %v", run, d, err)
				}
				if d > time.Second && (st.Ops != tt.ops || took < 250*time.Millisecond) {
					t.Errorf("run %d: %d ops in %v; want the %d line of a whole run of 300ms", run, st.Ops, took, tt.ops)
				}
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
			checkClean(t, m)
		})
	}
}

// Without ops, an op is a run that ended by itself (issue 19: ops/s was
// always 0 without ops): 1 for a whole run of command or of load, 0 for
// a run cut by its end.
func TestExecRunsAreOpsWithoutOps(t *testing.T) {
	needCgroups(t)
	tests := []struct {
		name string
		e    Exec
		d    time.Duration
		want uint64
	}{
		{"command", Exec{Command: []string{"sh", "-c", "echo a; echo b"}}, 10 * time.Second, 1},
		{"command cut", Exec{Command: []string{"sleep", "1000"}}, 100 * time.Millisecond, 0},
		{"load", Exec{Command: []string{"sleep", "1000"}, Load: []string{"sh", "-c", "echo a; echo b"}}, 10 * time.Second, 1},
		{"load cut", Exec{Command: []string{"sleep", "1000"}, Load: []string{"sleep", "1000"}}, 100 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, m := marked(tt.e)
			r := newExec(t, w)
			for run := range 2 {
				if err := Start(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), tt.d)
				st, err := r.Run(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if st.Ops != tt.want {
					t.Errorf("run %d: %d ops, want %d", run, st.Ops, tt.want)
				}
			}
			r.Close()
			checkClean(t, m)
		})
	}
}

func TestExecSetupTeardown(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	w, m := marked(Exec{
		Command:  []string{"sh", "-c", "test -f setup.done"},
		Dir:      dir,
		Setup:    []string{"sh", "-c", "touch setup.done; sleep 1000 & echo left running"},
		Teardown: []string{"sh", "-c", "rm setup.done; touch teardown.done"},
	})
	r := newExec(t, w)
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatalf("the command did not find what setup made: %v", err)
	}
	if pids := leftovers(m); len(pids) > 0 {
		t.Errorf("setup's leftovers %v still run", pids)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "teardown.done")); err != nil {
		t.Errorf("teardown did not run: %v", err)
	}
	checkClean(t, m)

	w, m = marked(Exec{Command: []string{"true"}, Setup: []string{"sh", "-c", "echo no database >&2; exit 1"}})
	r = newExec(t, w)
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "setup sh -c") || !strings.Contains(err.Error(), "no database") {
		t.Errorf("Run with a failing setup: %v", err)
	}
	r.Close()
	checkClean(t, m)
}

// The end of the run's context while command starts (tailgate
// interrupted) stops it and leaves nothing.
func TestExecInterruptedStart(t *testing.T) {
	needCgroups(t)
	w, m := marked(Exec{Command: []string{"sleep", "1000"}, Ready: &Ready{File: "/nonexistent", Timeout: time.Minute}})
	r := newExec(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := Start(ctx, r); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start: %v, want the context's end", err)
	}
	r.Close()
	checkClean(t, m)
}

func TestExecNotFound(t *testing.T) {
	tests := []struct {
		name string
		e    Exec
		want string
	}{
		{"not in PATH", Exec{Command: []string{"no-such-program-xyz"}}, `command: program "no-such-program-xyz" not found in PATH`},
		{"relative to dir", Exec{Command: []string{"./server"}, Dir: t.TempDir()}, "command: program ./server:"},
		{"load", Exec{Command: []string{"true"}, Load: []string{"/nonexistent/client"}}, "load: program /nonexistent/client"},
		{"dir", Exec{Command: []string{"true"}, Dir: "/nonexistent"}, "dir:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWorkload(Workload{Kind: "exec", Params: &tt.e})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewWorkload: %v, want an error holding %q", err, tt.want)
			}
		})
	}
	if gs, _ := cgroup.OwnedBy(os.Getpid()); len(gs) > 0 {
		t.Errorf("groups left: %v", gs)
	}
}

// Lines longer than the longest kept are read to their end: a child never
// blocks on output nobody reads.
func TestScanLines(t *testing.T) {
	long := strings.Repeat("x", 3*maxLine)
	in := "a\r\n" + long + "\nb\nlast"
	var got []string
	scanLines(strings.NewReader(in), func(l []byte) { got = append(got, string(l)) })
	if len(got) != 4 || got[0] != "a" || len(got[1]) != maxLine || got[2] != "b" || got[3] != "last" {
		t.Errorf("lines %d: %q...", len(got), got[0])
	}
}

// needCgroups skips where the exec workload cannot make its cgroup: it
// needs root.
func needCgroups(t *testing.T) {
	t.Helper()
	testenv.Need(t, testenv.Root)
}
