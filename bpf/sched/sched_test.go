package sched

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// pingpong bounces a byte between two locked threads over pipes: each round
// trip wakes each side once.
func pingpong(t *testing.T, rounds int) {
	var ab, ba [2]int
	if err := unix.Pipe(ab[:]); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe(ba[:]); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, fd := range []int{ab[0], ab[1], ba[0], ba[1]} {
			unix.Close(fd)
		}
	}()
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b := []byte{0}
		for range rounds {
			unix.Read(ab[0], b)
			unix.Write(ba[1], b)
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := []byte{0}
	for range rounds {
		unix.Write(ab[1], b)
		unix.Read(ba[0], b)
	}
	<-done
}

func TestTracerSeesWakeupsAndForks(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TGID: uint32(os.Getpid()), Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			const rounds, children = 5000, 5
			pingpong(t, rounds)
			// Children are followed through sched_process_fork: their first
			// run is sched.wakeup_new.
			for range children {
				if err := exec.Command("/bin/true").Run(); err != nil {
					t.Fatal(err)
				}
			}
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			if n := hs["sched.runq"].Count(); n < rounds {
				t.Errorf("sched.runq counted %d, want at least %d wakeups of %d round trips", n, rounds, rounds)
			}
			if n := hs["sched.wakeup_new"].Count(); n < children {
				t.Errorf("sched.wakeup_new counted %d, want at least %d (one per child)", n, children)
			}
			if p99 := hs["sched.runq"].Quantile(0.99); p99 <= 0 || p99 > float64(time.Second) {
				t.Errorf("sched.runq p99 %v ns is not a run-queue latency", p99)
			}
			ids := tr.ProgramIDs()
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}
			left, err := tracing.StillLoaded(ids, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("programs %v still loaded 5 s after Close", left)
			}
		})
	}
}

func TestTracerIgnoresOtherProcesses(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	// A tgid that does not exist: nothing may be counted.
	tr, err := New(Options{TGID: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	pingpong(t, 1000)
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics {
		if n := hs[m].Count(); n != 0 {
			t.Errorf("%s counted %d events of untraced processes", m, n)
		}
	}
}

// TestThreadsMode counts only registered threads: of a ping-pong pair, the
// registered side's wakeups, and the processes it forks.
func TestThreadsMode(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TGID: uint32(os.Getpid()), Variant: v, Threads: true})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := tr.AddThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			const rounds, children = 5000, 3
			pingpong(t, rounds) // this thread is one side
			for range children {
				if err := exec.Command("/bin/true").Run(); err != nil {
					t.Fatal(err)
				}
			}
			if err := tr.RemoveThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			// At most one wakeup of this side per round trip (none when the
			// partner's byte arrives before this side blocks), plus a few of
			// the exec waits; the partner's wakeups, which would double it,
			// are not counted.
			if n := hs["sched.runq"].Count(); n < rounds/2 || n > rounds*13/10 {
				t.Errorf("sched.runq counted %d, want one side of %d round trips (%d-%d)", n, rounds, rounds/2, rounds*13/10)
			}
			if n := hs["sched.wakeup_new"].Count(); n < children {
				t.Errorf("sched.wakeup_new counted %d, want at least %d children of the registered thread", n, children)
			}
		})
	}
}
