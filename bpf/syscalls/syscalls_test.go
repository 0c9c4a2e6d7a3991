package syscalls

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

func TestTracerCountsWorkloadSyscalls(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Syscalls: []string{"read", "getppid"}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			if tr.Variant() != v {
				t.Errorf("variant %s, want %s", tr.Variant(), v)
			}
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			const reads, getppids = 20000, 5000
			f, err := os.Open("/dev/zero")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			runtime.LockOSThread()
			for range reads {
				if _, err := unix.Read(int(f.Fd()), buf); err != nil {
					t.Fatal(err)
				}
			}
			for range getppids {
				unix.Getppid()
			}
			runtime.UnlockOSThread()
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			// Other goroutines of the test binary may read too, but hardly.
			check := func(metric string, made uint64) {
				got := hs[metric].Count()
				if got < made*95/100 || got > made+200 {
					t.Errorf("%s counted %d, workload made %d", metric, got, made)
				}
				if hs[metric].Quantile(0.5) <= 0 || hs[metric].Quantile(0.5) > 1e7 {
					t.Errorf("%s p50 %v ns is not a syscall latency", metric, hs[metric].Quantile(0.5))
				}
			}
			check("syscall.read", reads)
			check("syscall.getppid", getppids)
			if hs["syscall.read"].Quantile(0.5) <= hs["syscall.getppid"].Quantile(0.5) {
				t.Errorf("4 KiB read p50 %v ns not slower than getppid p50 %v ns",
					hs["syscall.read"].Quantile(0.5), hs["syscall.getppid"].Quantile(0.5))
			}

			// Reset empties the histograms.
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			hs, err = tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			if n := hs["syscall.getppid"].Count(); n != 0 {
				t.Errorf("after reset getppid count %d, want 0", n)
			}

			ids := tr.ProgramIDs()
			if len(ids) == 0 {
				t.Fatal("tracer reports no programs")
			}
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
	// Trace a tgid that makes no syscalls: pid 1's children are not us.
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1}, Syscalls: []string{"getppid"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for range 1000 {
		unix.Getppid()
	}
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := hs["syscall.getppid"].Count(); n > 100 {
		t.Errorf("counted %d getppid calls of an untraced process", n)
	}
}

func TestUnknownSyscall(t *testing.T) {
	if _, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1}, Syscalls: []string{"raed"}}); err == nil {
		t.Fatal("unknown syscall accepted")
	}
}

// TestThreadsMode counts the syscalls of registered threads only.
func TestThreadsMode(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}, Syscalls: []string{"getppid"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const mine, others = 3000, 7000
	done := make(chan struct{})
	go func() { // an unregistered thread of the same process
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range others {
			unix.Getppid()
		}
		close(done)
	}()
	runtime.LockOSThread()
	if err := tr.AddThread(unix.Gettid()); err != nil {
		t.Fatal(err)
	}
	for range mine {
		unix.Getppid()
	}
	if err := tr.RemoveThread(unix.Gettid()); err != nil {
		t.Fatal(err)
	}
	runtime.UnlockOSThread()
	<-done
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := hs["syscall.getppid"].Count(); n != mine {
		t.Errorf("counted %d getppid calls, the registered thread made %d (and another thread %d)", n, mine, others)
	}
}
