//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// runFor runs w once for d.
func runFor(t *testing.T, r Runner, d time.Duration) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	st, err := r.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return st
}

// checkGoroutines fails t if goroutines started after before are still
// running once things settle.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWorkloads(t *testing.T) {
	tests := []struct {
		name string
		w    Workload
		// syscall the workload counts one of per op (0 = no such check)
		perOp string
	}{
		{"syscall read", Workload{Kind: "syscall"}, "read"},
		{"syscall write 2 threads", Workload{Kind: "syscall", Threads: 2, Params: &Syscall{Name: "write", Size: 512}}, "write"},
		{"syscall getppid", Workload{Kind: "syscall", Params: &Syscall{Name: "getppid"}}, "getppid"},
		{"pingpong pipe", Workload{Kind: "pingpong"}, ""},
		{"pingpong eventfd 2 pairs", Workload{Kind: "pingpong", Pairs: 2, Params: &Pingpong{Channel: "eventfd"}}, ""},
		{"pingpong futex", Workload{Kind: "pingpong", Params: &Pingpong{Channel: "futex"}}, ""},
		{"timer", Workload{Kind: "timer", Threads: 2}, ""},
		{"timer 100us", Workload{Kind: "timer", Params: &Timer{Interval: 100 * time.Microsecond}}, ""},
		{"fork", Workload{Kind: "fork"}, ""},
		{"fork thread", Workload{Kind: "fork", Params: &Fork{Mode: "thread"}}, ""},
		{"noise", Workload{Kind: "noise", Noise: 2}, ""},
		{"pingpong with noise", Workload{Kind: "pingpong", Noise: NoiseNumCPU, Params: &Pingpong{Channel: "futex"}}, ""},
		{"syscall with noise", Workload{Kind: "syscall", Noise: 1}, "read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.w.Kind == "timer" {
				testenv.Need(t, testenv.Root) // the timer's mlockall
			}
			before := runtime.NumGoroutine()
			procs := runtime.GOMAXPROCS(0)
			r, err := NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the second run must count only itself and must not
			// be disturbed by what the first left behind.
			for i := range 2 {
				start := time.Now()
				st := runFor(t, r, 200*time.Millisecond)
				if took := time.Since(start); took > time.Second {
					t.Errorf("run %d took %v", i, took)
				}
				if st.Ops == 0 {
					t.Fatalf("run %d: no ops; stats %+v", i, st)
				}
				if tt.perOp != "" && st.Syscalls[tt.perOp] != st.Ops {
					t.Errorf("run %d: %d ops but %d %s calls", i, st.Ops, st.Syscalls[tt.perOp], tt.perOp)
				}
				if tt.w.Kind == "timer" {
					h := st.Metrics[MetricTimerLateness]
					if h == nil || h.Count() != st.Ops {
						t.Fatalf("run %d: %d wakeups, lateness histogram %v", i, st.Ops, h)
					}
				} else if len(st.Metrics) != 0 {
					t.Errorf("run %d: metrics %v", i, st.Metrics)
				}
				t.Logf("run %d: %d ops, syscalls %v", i, st.Ops, st.Syscalls)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(context.Background()); !errors.Is(err, ErrClosed) {
				t.Errorf("Run after Close: %v, want ErrClosed", err)
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Errorf("GOMAXPROCS %d after the runs, %d before", got, procs)
			}
			checkGoroutines(t, before)
		})
	}
}

func TestPingpongCounts(t *testing.T) {
	// A round trip is a write and a read by each thread, plus what the
	// stopper wrote and the drain read.
	r, err := NewWorkload(Workload{Kind: "pingpong", Params: &Pingpong{Channel: "pipe"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := runFor(t, r, 200*time.Millisecond)
	if w := st.Syscalls["write"]; w < 2*st.Ops || w > 2*st.Ops+200 {
		t.Errorf("%d round trips, %d writes", st.Ops, w)
	}
	if rd := st.Syscalls["read"]; rd < 2*st.Ops || rd > 2*st.Ops+200 {
		t.Errorf("%d round trips, %d reads", st.Ops, rd)
	}
}

func TestSyscallRate(t *testing.T) {
	tests := []struct {
		name string
		w    Workload
		d    time.Duration
		want float64
	}{
		{"1000/s for 300ms", Workload{Kind: "syscall", Params: &Syscall{Name: "getppid", Rate: 1000}}, 300 * time.Millisecond, 300},
		{"2 threads 500/s for 300ms", Workload{Kind: "syscall", Threads: 2, Params: &Syscall{Name: "read", Size: 64, Rate: 500}}, 300 * time.Millisecond, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			st := runFor(t, r, tt.d)
			if got := float64(st.Ops); got < 0.7*tt.want || got > 1.3*tt.want {
				t.Errorf("%v ops, want %v ±30%%", got, tt.want)
			}
			call := tt.w.Params.(*Syscall).Name
			if st.Syscalls[call] != st.Ops {
				t.Errorf("%d ops, %d %s calls", st.Ops, st.Syscalls[call], call)
			}
			if st.Syscalls["clock_nanosleep"] == 0 {
				t.Error("a paced run never slept")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name string
		w    Workload
	}{
		{"syscall slow rate", Workload{Kind: "syscall", Params: &Syscall{Name: "getppid", Rate: 0.5}}},
		{"pingpong pipe", Workload{Kind: "pingpong"}},
		{"pingpong eventfd", Workload{Kind: "pingpong", Params: &Pingpong{Channel: "eventfd"}}},
		{"pingpong futex", Workload{Kind: "pingpong", Params: &Pingpong{Channel: "futex"}}},
		{"timer 1s", Workload{Kind: "timer", Params: &Timer{Interval: time.Second}}},
		{"fork", Workload{Kind: "fork", Threads: 2}},
		{"noise", Workload{Kind: "noise"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.w.Kind == "timer" {
				testenv.Need(t, testenv.Root) // the timer's mlockall
			}
			before := runtime.NumGoroutine()
			r, err := NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			if _, err := r.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start) - 100*time.Millisecond; took > 200*time.Millisecond {
				t.Errorf("Run returned %v after the cancel", took)
			}
			checkGoroutines(t, before)
		})
	}
}

func TestNoiseKillsHogs(t *testing.T) {
	r, err := NewWorkload(Workload{Kind: "syscall", Noise: 3, Params: &Syscall{Name: "getppid"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runFor(t, r, 100*time.Millisecond)
	// Every hog was reaped: no child of this process group is left to
	// wait for. (Pid 0: the cgroup guard that an exec scenario's run
	// leaves is in a session of its own, internal/cgroup.)
	if pid, err := unix.Wait4(0, nil, unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		t.Errorf("wait4 after the run: pid %d, %v; want ECHILD", pid, err)
	}
}

func TestTimerPriority(t *testing.T) {
	r, err := NewWorkload(Workload{Kind: "timer", Params: &Timer{Priority: 10}})
	if err != nil {
		if os.Geteuid() != 0 && strings.Contains(err.Error(), "CAP_SYS_NICE") {
			return // the clear error is what is wanted without privileges
		}
		t.Fatal(err)
	}
	defer r.Close()
	st := runFor(t, r, 100*time.Millisecond)
	if st.Ops == 0 || st.Syscalls["sched_setscheduler"] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestNewWorkloadErrors(t *testing.T) {
	tests := []struct {
		name string
		w    Workload
		want string
	}{
		{"no kind", Workload{}, `unknown workload kind ""`},
		{"parameters of another kind", Workload{Kind: "syscall", Params: &Timer{Interval: time.Millisecond}}, "workload kind syscall takes its parameters as *Syscall, got *scenarios.Timer"},
		{"bad syscall", Workload{Kind: "syscall", Params: &Syscall{Name: "open"}}, `unknown syscall "open"`},
		{"size for getppid", Workload{Kind: "syscall", Params: &Syscall{Name: "getppid", Size: 8}}, "size does not apply to syscall getppid"},
		{"bad channel", Workload{Kind: "pingpong", Params: &Pingpong{Channel: "tcp"}}, `unknown channel "tcp"`},
		{"negative threads", Workload{Kind: "fork", Threads: -1}, "threads must be from 1 to 256, got -1"},
		{"negative noise", Workload{Kind: "fork", Noise: -2}, `noise must be "ncpu" or from 0 to 1024`},
		{"short interval", Workload{Kind: "timer", Params: &Timer{Interval: time.Microsecond}}, "interval must be from 10µs to 1s"},
		{"dma_latency below -1", Workload{Kind: "timer", Params: &Timer{DMALatency: ref(-2)}}, "dma_latency must be from -1 to 1000000, got -2"},
		{"pairs for another kind", Workload{Kind: "syscall", Pairs: 2}, "pairs does not apply to workload kind syscall"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWorkload(tt.w)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSyscallNumbers(t *testing.T) {
	want := map[string]int{
		"read": unix.SYS_READ, "write": unix.SYS_WRITE, "getppid": unix.SYS_GETPPID,
		"futex": unix.SYS_FUTEX, "nanosleep": unix.SYS_NANOSLEEP, "clock_nanosleep": unix.SYS_CLOCK_NANOSLEEP,
		"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "wait4": unix.SYS_WAIT4, "openat": unix.SYS_OPENAT,
		"epoll_pwait": unix.SYS_EPOLL_PWAIT, "io_uring_enter": unix.SYS_IO_URING_ENTER, "pipe2": unix.SYS_PIPE2,
		"eventfd2": unix.SYS_EVENTFD2, "fsync": unix.SYS_FSYNC, "sendmmsg": unix.SYS_SENDMMSG,
		"getrandom": unix.SYS_GETRANDOM, "membarrier": unix.SYS_MEMBARRIER, "tgkill": unix.SYS_TGKILL,
		"sched_setscheduler": unix.SYS_SCHED_SETSCHEDULER, "rt_sigprocmask": unix.SYS_RT_SIGPROCMASK,
		"getdents64": unix.SYS_GETDENTS64, "recvmmsg": unix.SYS_RECVMMSG, "accept4": unix.SYS_ACCEPT4,
	}
	for name, nr := range want {
		if got, ok := SyscallNumbers[name]; !ok || got != nr {
			t.Errorf("SyscallNumbers[%q] = %d, %v; want %d", name, got, ok, nr)
		}
	}
}

func TestPinThreadRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	if before.Count() < 2 {
		t.Fatalf("needs two CPUs, this thread may use %d", before.Count())
	}
	m := &member{sys: map[string]uint64{}}
	_, restore := pinThread(1, nil, m)
	var pinned unix.CPUSet
	unix.SchedGetaffinity(0, &pinned)
	if pinned.Count() != 1 {
		t.Errorf("pinned thread may run on %d CPUs, want 1", pinned.Count())
	}
	restore()
	var after unix.CPUSet
	unix.SchedGetaffinity(0, &after)
	if after != before {
		t.Errorf("CPU set after restore %v, before %v", after, before)
	}
}
