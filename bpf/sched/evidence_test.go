package sched

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// pinHere pins the calling (locked) thread to cpu.
func pinHere(t *testing.T, cpu int) {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
}

// TestEvidenceNamesTheTaskThatRanInstead: a ping-pong pinned to one CPU
// with a spinning hog; the slowest run-queue waits of the registered side
// are caught with the hog as the task switched out for it, and a kernel
// stack where the waiting thread slept (bpf_get_task_stack starts above
// the scheduler's own frames).
func TestEvidenceNamesTheTaskThatRanInstead(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	const hogComm = "tg-evidence-hog"
	var stop atomic.Bool
	hogReady := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pinHere(t, 0)
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafePointer(hogComm))), 0, 0, 0)
		close(hogReady)
		for !stop.Load() {
		}
	}()
	defer stop.Store(true)
	<-hogReady

	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			const k = 10
			tr, err := New(Options{TGID: uint32(os.Getpid()), Variant: v, Threads: true, Evidence: k})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			pinHere(t, 0)
			// At nice 19 a wakeup does not preempt the hog: the waits are
			// the hog's slices.
			if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19); err != nil {
				t.Fatal(err)
			}
			defer unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 0)
			if err := tr.AddThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			pingpongPinned(t, 3000, runtime.NumCPU()-1)
			if err := tr.RemoveThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			got := evs["sched.runq"]
			if len(got) != k {
				t.Fatalf("%d sched.runq events, want %d (dropped %d)", len(got), k, dropped)
			}
			hog, pipe := 0, 0
			sym := tracing.NewSymbolizer()
			for _, e := range got {
				if e.TID != uint32(unix.Gettid()) {
					t.Errorf("event of tid %d (%s), want the registered thread %d", e.TID, e.Comm, unix.Gettid())
				}
				if e.CPU != 0 {
					t.Errorf("event on CPU %d, the thread is pinned to 0", e.CPU)
				}
				if e.OtherComm == hogComm {
					hog++
				}
				if v == tracing.TPBTF {
					// Where it slept: the pipe read, or the Go runtime's
					// futex between reads.
					frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
					if !strings.Contains(frames, "do_syscall_64") {
						t.Errorf("kernel stack of a woken task is not a sleeping syscall: %s", frames)
					}
					if strings.Contains(frames, "pipe_read") {
						pipe++
					}
				}
			}
			if v == tracing.TPBTF && pipe == 0 {
				t.Errorf("no kernel stack of the %d slowest waits is in a pipe read", k)
			}
			if hog == 0 {
				var others []string
				for _, e := range got {
					others = append(others, e.OtherComm)
				}
				t.Errorf("the hog %q is not the task that ran instead in any of the %d slowest waits: %v", hogComm, k, others)
			}
		})
	}
}

func unsafePointer(s string) *byte {
	b, _ := unix.BytePtrFromString(s)
	return b
}

// pingpongPinned is a ping-pong of rounds round trips between this thread
// and a partner pinned to partnerCPU.
func pingpongPinned(t *testing.T, rounds, partnerCPU int) {
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
		pinHere(t, partnerCPU)
		b := []byte{0}
		for range rounds {
			unix.Read(ab[0], b)
			unix.Write(ba[1], b)
		}
		close(done)
	}()
	b := []byte{0}
	for range rounds {
		unix.Write(ab[1], b)
		unix.Read(ba[0], b)
	}
	<-done
}
