package syscalls

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
)

// slowReads makes n reads of a pipe, each of which waits about delay for
// its byte: the writer sleeps delay from when the reader says, on a
// second pipe, that it is about to read, so that a reader held up before
// a read does not find its byte already there.
func slowReads(t *testing.T, n int, delay time.Duration) {
	var p, ready [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe(ready[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	defer unix.Close(ready[0])
	defer unix.Close(ready[1])
	go func() {
		b := make([]byte, 1)
		for range n {
			if _, err := unix.Read(ready[0], b); err != nil {
				return
			}
			time.Sleep(delay)
			unix.Write(p[1], []byte{1})
		}
	}()
	b := make([]byte, 1)
	for range n {
		unix.Write(ready[1], []byte{1})
		if _, err := unix.Read(p[0], b); err != nil {
			t.Fatal(err)
		}
	}
}

// The slow reads wait slowWait; a read waiting slowBound or more is one of
// them. The margin is for other work holding up a fast read: at 20 ms and
// 15 ms, with the writer not waiting for the reader, 12 of 50 reruns
// beside the noise neighbour failed (BENCHMARKS.md, "Timing bounds of
// three tests").
const slowWait, slowBound = 200 * time.Millisecond, 100 * time.Millisecond

// TestEvidenceCatchesSlowestSyscalls: among many fast reads, the few slow
// ones are the evidence, with this thread's identity and a user stack that
// names the function that made them.
func TestEvidenceCatchesSlowestSyscalls(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			const k, slow = 5, 3
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: k}, Syscalls: []string{"read"}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			for trial := range 2 { // a second trial starts afresh
				if err := tr.Reset(); err != nil {
					t.Fatal(err)
				}
				runtime.LockOSThread()
				tid := unix.Gettid()
				f, err := os.Open("/dev/zero")
				if err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 64)
				for range 20000 {
					unix.Read(int(f.Fd()), buf)
				}
				f.Close()
				slowReads(t, slow, slowWait)
				runtime.UnlockOSThread()
				evs, dropped, err := tr.Evidence()
				if err != nil {
					t.Fatal(err)
				}
				got := evs[Metric("read")]
				if len(got) != k {
					t.Fatalf("trial %d: %d events of syscall.read, want %d (dropped %d)", trial, len(got), k, dropped)
				}
				for i, e := range got {
					if i > 0 && e.Latency > got[i-1].Latency {
						t.Errorf("events not slowest first: %d then %d ns", got[i-1].Latency, e.Latency)
					}
				}
				sym := symbols.NewSymbolizer()
				for i, e := range got[:slow] {
					if e.Latency < uint64(slowBound) {
						t.Errorf("trial %d: event %d of %d ns, want the %d reads that waited ≥%v", trial, i, e.Latency, slow, slowBound)
					}
					if e.TID != uint32(tid) || e.PID != uint32(os.Getpid()) {
						t.Errorf("event of tid %d pid %d, want this thread %d of %d", e.TID, e.PID, tid, os.Getpid())
					}
					frames := sym.Frames(e.UserStack, true, e.PID)
					if !strings.Contains(strings.Join(frames, " "), "slowReads") {
						t.Errorf("user stack %v does not name slowReads", frames)
					}
					if len(e.KernelStack) == 0 {
						t.Errorf("event %d has no kernel stack", i)
					}
				}
				if got[slow].Latency >= uint64(slowBound) {
					t.Errorf("a fast read of %d ns among the slow", got[slow].Latency)
				}
			}
		})
	}
}
