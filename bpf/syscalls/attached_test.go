package syscalls

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// Kept programs are attached once, by the first Tracer, and stay attached
// with the Loaded: a later Tracer of this process or of one that imported
// them counts each event once, through the same links; between Tracers
// they count no task; Detach takes the links away and the next Tracer
// attaches again.
func TestKeptTracerStaysAttachedOnce(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	objs := tracing.NewLoaded()
	defer objs.Close()
	self, noTask := uint32(os.Getpid()), ^uint32(0)
	newTracer := func(lo *tracing.Loaded, tgid uint32) *tracing.Tracer {
		tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: tgid, Loaded: lo}, Syscalls: []string{"read", "getppid"}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}

	first := newTracer(objs, noTask)
	ids := first.ProgramIDs()
	first.Close()
	attachedOnce(t, "after the first Tracer closed", ids)

	// Between Tracers the attached programs count no task.
	second := newTracer(objs, self)
	countsOnce(t, "a second Tracer", second)
	second.Close()
	before := keptCount(t, ids)
	readZero(t, 3000)
	if after := keptCount(t, ids); after != before {
		t.Errorf("after the Tracer closed, the attached programs counted %d reads of this process", after-before)
	}

	imported, done := importHere(t, objs)
	third := newTracer(imported, self)
	attachedOnce(t, "with a Tracer of imported objects", ids)
	countsOnce(t, "a Tracer of imported objects", third)
	third.Close()
	done()
	attachedOnce(t, "after the importer let go", ids)

	if err := objs.Detach(); err != nil {
		t.Fatal(err)
	}
	if n := linksTo(t, ids, 0); n != 0 {
		t.Fatalf("%d links left after Detach", n)
	}
	fourth := newTracer(objs, self)
	attachedOnce(t, "attached again after Detach", ids)
	fourth.Close()

	objs.Close()
	if left, err := tracing.StillLoaded(ids, 2*time.Second); err != nil || len(left) > 0 {
		t.Errorf("programs %v still loaded after Close (%v)", left, err)
	}
}

// importHere exports objs and imports them into this same process, as a
// worker does from the descriptors it inherits; done closes what it
// imported.
func importHere(t *testing.T, objs *tracing.Loaded) (imported *tracing.Loaded, done func()) {
	t.Helper()
	files, lf, err := objs.Export(0) // numbered by index into files
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range lf.Sets {
		if !set.Attached {
			t.Errorf("%s exported as not attached", set.Name)
		}
		for _, fds := range []map[string]int{set.Programs, set.Maps} {
			for name, i := range fds {
				// The import owns what it is given: a copy, not the file's.
				fd, err := unix.Dup(int(files[i].Fd()))
				if err != nil {
					t.Fatal(err)
				}
				fds[name] = fd
			}
		}
	}
	imported, err = tracing.ImportLoaded(lf)
	if err != nil {
		t.Fatal(err)
	}
	return imported, func() {
		imported.Close()
		for _, f := range files {
			f.Close()
		}
	}
}

// attachedOnce wants one link for each program of ids.
func attachedOnce(t *testing.T, when string, ids []ebpf.ProgramID) {
	t.Helper()
	if n := linksTo(t, ids, len(ids)); n != len(ids) {
		t.Errorf("%s: %d links to the %d kept programs, want one each", when, n, len(ids))
	}
}

// countsOnce wants tr to count each of 3000 reads once.
func countsOnce(t *testing.T, what string, tr *tracing.Tracer) {
	t.Helper()
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	readZero(t, 3000)
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if n := hs["syscall.read"].Count(); n < 2900 || n > 3200 {
		t.Errorf("%s counted %d of 3000 reads", what, n)
	}
}

func readZero(t *testing.T, n int) {
	t.Helper()
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

// linksTo counts the kernel's links to the programs of ids, waiting up to
// a second for the count to be want: a closed link goes after the
// kernel's grace period.
func linksTo(t *testing.T, ids []ebpf.ProgramID, want int) int {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		n := 0
		var it link.Iterator
		for it.Next() {
			info, err := it.Link.Info()
			if err == nil && slices.Contains(ids, info.Program) {
				n++
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keptCount is the events the kept programs of ids have counted in their
// hist_stats map, summed over metrics and CPUs.
func keptCount(t *testing.T, ids []ebpf.ProgramID) uint64 {
	t.Helper()
	m := tracingtest.ProgramMap(t, ids, "hist_stats")
	var total uint64
	for k := range m.MaxEntries() {
		var per []struct{ Count, Sum, Min, Max uint64 }
		if err := m.Lookup(k, &per); err != nil {
			t.Fatal(err)
		}
		for _, s := range per {
			total += s.Count
		}
	}
	return total
}
