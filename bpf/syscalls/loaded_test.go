package syscalls

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// A tracer kept loaded (tracing.Loaded) is attached again with the same
// programs, and with every map and variable as a fresh load has them: what
// the earlier attach followed is not followed, and what it counted is not
// counted. One loaded with other constants is refused.
func TestLoadedTracerIsAttachedAgainAsNew(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	objs := tracing.NewLoaded()
	defer objs.Close()
	noTask := ^uint32(0)
	opts := func(tgid uint32, syscalls ...string) Options {
		return Options{TracerOptions: tracing.TracerOptions{TGID: tgid, Loaded: objs}, Syscalls: syscalls}
	}
	reads := func(n int) {
		f, err := os.Open("/dev/zero")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 64)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range n {
			if _, err := unix.Read(int(f.Fd()), buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(tr *tracing.Tracer) uint64 {
		hs, err := tr.Read()
		if err != nil {
			t.Fatal(err)
		}
		return hs["syscall.read"].Count()
	}

	// First attach: it follows this process and counts its reads.
	first, err := New(opts(noTask, "read", "getppid"))
	if err != nil {
		t.Fatal(err)
	}
	ids := first.ProgramIDs()
	if err := first.FollowProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	reads(3000)
	if n := count(first); n < 2900 {
		t.Fatalf("first attach counted %d of 3000 reads of a followed process", n)
	}
	first.Close()
	if objs.Len() != 1 {
		t.Fatalf("%d tracers kept, want 1", objs.Len())
	}

	// Attached again, counting no task. It follows another process, so
	// that a stale entry for this one in tgids would count again.
	again, err := New(opts(noTask, "read", "getppid"))
	if err != nil {
		t.Fatal(err)
	}
	if got := again.ProgramIDs(); !sameIDs(got, ids) {
		t.Errorf("programs %v attached again, want the kept %v", got, ids)
	}
	if n := count(again); n != 0 {
		t.Errorf("attached again: %d reads in its histogram before any, want 0", n)
	}
	if err := again.FollowProcess(1); err != nil {
		t.Fatal(err)
	}
	reads(3000)
	if n := count(again); n > 100 {
		t.Errorf("attached again: counted %d reads of a process the first attach followed", n)
	}
	again.Close()

	// And counting this process as its target.
	self, err := New(opts(uint32(os.Getpid()), "read", "getppid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Reset(); err != nil {
		t.Fatal(err)
	}
	reads(3000)
	if n := count(self); n < 2900 || n > 3200 {
		t.Errorf("attached for this process: counted %d of 3000 reads", n)
	}
	self.Close()

	// Other constants (another syscall) are other programs.
	if tr, err := New(opts(noTask, "write")); !errors.Is(err, tracing.ErrStale) {
		if tr != nil {
			tr.Close()
		}
		t.Errorf("kept objects taken for other constants: err = %v, want ErrStale", err)
	}

	objs.Close()
	if left, err := tracing.StillLoaded(ids, 2*time.Second); err != nil || len(left) > 0 {
		t.Errorf("programs %v still loaded after Close (%v)", left, err)
	}
}

func sameIDs[T interface{ ~uint32 }](a, b []T) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
