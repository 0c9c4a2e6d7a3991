package sched

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/internal/threadtest"
)

// TestEvidenceNamesTheTaskThatRanInstead: a ping-pong pinned to one CPU
// with a SCHED_FIFO hog that spins most of the time; the slowest run-queue waits of the registered side
// are caught with the hog as the task switched out for it, and a kernel
// stack where the waiting thread slept, in both variants: tp_btf reads it
// from the task at switch-in (bpf_get_task_stack starts above the
// scheduler's own frames), raw_tp keeps it at the task's switch-out.
func TestEvidenceNamesTheTaskThatRanInstead(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	const hogComm = "tg-evidence-hog"
	// SCHED_FIFO above the registered thread's, so that on its CPU it, and
	// no other load of the machine, is what delays it: spin 3 ms, sleep
	// 1 ms.
	threadtest.Hog(t, hogComm, 0, 2, 3*time.Millisecond, time.Millisecond)

	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			const k = 10
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: k}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			threadtest.Pin(t, 0)
			// SCHED_FIFO 1: the hog's spins delay it, nothing of the
			// machine's other load does, and when the hog sleeps it is the
			// next to run, so the hog is the task switched out for it.
			if err := threadtest.SetScheduler(unix.SCHED_FIFO, 1); err != nil {
				t.Fatal(err)
			}
			defer threadtest.SetScheduler(0, 0) // SCHED_OTHER
			if err := tr.AddThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			// A shared machine's load can still, rarely, hold the CPU
			// through a whole round (a non-preemptible stretch): up to
			// three rounds, until the hog is in the slowest wait.
			var got []tracing.Event
			for round := 0; round < 3; round++ {
				if err := tr.Reset(); err != nil {
					t.Fatal(err)
				}
				threadtest.PingPongPinned(t, 1000, runtime.NumCPU()-1)
				evs, dropped, err := tr.Evidence()
				if err != nil {
					t.Fatal(err)
				}
				if got = evs["sched.runq"]; len(got) != k {
					t.Fatalf("%d sched.runq events, want %d (dropped %d)", len(got), k, dropped)
				}
				if got[0].OtherComm == hogComm {
					break
				}
			}
			if err := tr.RemoveThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			hog, pipe := 0, 0
			var prio int32
			sym := symbols.NewSymbolizer()
			for _, e := range got {
				if e.TID != uint32(unix.Gettid()) {
					t.Errorf("event of tid %d (%s), want the registered thread %d", e.TID, e.Comm, unix.Gettid())
				}
				if e.CPU != 0 {
					t.Errorf("event on CPU %d, the thread is pinned to 0", e.CPU)
				}
				if e.OtherComm == hogComm {
					hog++
					prio = e.OtherPrio
				}
				// Where it slept: the pipe read, or the Go runtime's
				// futex between reads; read from the task at switch-in
				// (tp_btf) or kept at its switch-out (raw_tp).
				frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
				if !strings.Contains(frames, "do_syscall_64") {
					t.Errorf("kernel stack of a woken task is not a sleeping syscall: %s", frames)
				}
				if strings.Contains(frames, "pipe_read") {
					pipe++
				}
			}
			if pipe == 0 {
				t.Errorf("no kernel stack of the %d slowest waits is in a pipe read", k)
			}
			// The kernel's prio of a SCHED_FIFO task of rtprio 2 is 97.
			if hog > 0 && prio != 97 {
				t.Errorf("the hog's prio is %d, want 97 (SCHED_FIFO 2)", prio)
			}
			// A runner's hypervisor can stop the vCPU for 8-12 ms while
			// it is idle: such a wait can be slower than the hog's, and
			// the task switched out for it is the idle task. No other task
			// may be named in a wait slower than the hog's slowest.
			var others []string
			for _, e := range got {
				others = append(others, e.OtherComm)
			}
			if hog == 0 {
				t.Errorf("the hog %q is not the task that ran instead in any of the %d slowest waits: %v", hogComm, k, others)
			}
			for _, e := range got {
				if e.OtherComm == hogComm {
					break
				}
				if !strings.HasPrefix(e.OtherComm, "swapper/") {
					t.Errorf("%q, neither the hog %q nor the idle task, ran instead in a wait of %v, slower than the hog's slowest: %v", e.OtherComm, hogComm, time.Duration(e.Latency), others)
				}
			}
		})
	}
}
