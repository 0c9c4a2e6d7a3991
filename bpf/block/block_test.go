package block

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

var variants = []tracing.Variant{tracing.TPBTF, tracing.RawTP}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ name, src, wantErr string }{
		{"null", "block:", ""},
		{"empty", "block: {}", ""},
		{"devices", "block: {devices: [vda, loop0]}", ""},
		{"unknown key", "block: {disks: [vda]}", `test.yaml:1:9: unknown key "disks" in tracers.block; allowed: devices`},
		{"not a list", "block: {devices: vda}", `test.yaml:1:18: devices must be a list of disks as /sys/block names them, e.g. [vda], got a string`},
		{"empty list", "block: {devices: []}", `test.yaml:1:18: devices is empty; name at least one, or leave devices out to count every disk`},
		{"a path", "block: {devices: [/dev/vda]}", `test.yaml:1:19: "/dev/vda" is not a block device name; name a disk as /sys/block lists it, e.g. vda`},
		{"twice", "block: {devices: [vda, vda]}", `test.yaml:1:24: device "vda" listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tracingtest.ParseEntry(t, Tracer, "test.yaml", tc.src, tracing.Workload{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Metrics, c.Metrics()); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownDevice(t *testing.T) {
	_, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Devices: []string{"no-such-disk"}})
	if !errors.Is(err, ErrUnknownDevice) || !errors.Is(err, tracing.ErrBadTarget) {
		t.Fatalf("err = %v, want ErrUnknownDevice and tracing.ErrBadTarget", err)
	}
}

// diskDir returns a directory on a block device, for fdatasyncs that reach
// a disk: under /var/tmp, or beside the package's sources when that is in
// memory (tmpfs).
func diskDir(t *testing.T) string {
	t.Helper()
	for _, parent := range []string{"/var/tmp", "."} {
		var st unix.Statfs_t
		if err := unix.Statfs(parent, &st); err != nil || st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
			continue
		}
		dir, err := os.MkdirTemp(parent, ".tailgate-block-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Fatal("no directory on a block device: /var/tmp and . are in memory")
	return ""
}

// diskOf returns the disk (as /sys/block names it) holding path: its
// st_dev through /sys/dev/block/MAJ:MIN, the whole disk for a partition.
func diskOf(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		t.Fatalf("%s is on no block device (%v)", path, err)
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	}
	return filepath.Base(real)
}

// dataWrites reads the disk's completed writes less its completed flushes
// (the fifth and sixteenth fields of /sys/block/<disk>/stat): an
// fdatasync's preflush is an empty write the disk counts as one, which
// completes when the flush request kblockd issues for it does.
func dataWrites(t *testing.T, disk string) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", disk, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	fs := strings.Fields(string(b))
	if len(fs) < 16 {
		t.Fatalf("/sys/block/%s/stat has no flush fields: %q", disk, b)
	}
	var n [2]uint64
	for i, f := range []string{fs[4], fs[15]} {
		if n[i], err = strconv.ParseUint(f, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return n[0] - n[1]
}

// fdatasyncs overwrites the first 4 KiB of a file in dir and fdatasyncs
// it, n times: each one data write of the calling task to the disk (the
// block is allocated beforehand, so no block allocation is written), and,
// on a filesystem that writes the inode from fsync itself (ext4 without a
// journal), a write of the inode table block when the write changed the
// file's mtime.
func fdatasyncs(t *testing.T, f *os.File, n int) {
	t.Helper()
	b := make([]byte, 4096)
	for i := range n {
		b[0] = byte(i)
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
	}
}

func openFile(t *testing.T, dir string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fdatasync"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fdatasyncs(t, f, 1)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return f
}

// writeBytes reads write_bytes of an io file of /proc: the bytes of page
// cache the task (/proc/thread-self/io) or the process, exited threads
// included (/proc/self/io), dirtied, which their fdatasyncs then write. A
// metadata buffer already dirty is not counted again (ext4's inode table
// block stays dirty in the page cache after each write of it), so this is
// the data they wrote.
func writeBytes(t *testing.T, io string) uint64 {
	t.Helper()
	b, err := os.ReadFile(io)
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "write_bytes: "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", io, ln, err)
			}
			return n
		}
	}
	t.Fatalf("%s has no write_bytes: %q", io, b)
	return 0
}

// ownRequests is what checkOwnRequests found: the requests block.rq
// counted, as data writes of the file and others (the inode).
type ownRequests struct {
	rq, data, meta uint64
}

// dispatchFrames are functions that dispatch what an I/O scheduler holds,
// whoever inserted it: a request first seen under one of them was
// inserted by another task.
var dispatchFrames = []string{"blk_mq_run_hw_queue", "blk_mq_sched_dispatch_requests", "blk_mq_dispatch_rq_list"}

// evidenceBatch is how many fdatasyncs countFdatasyncs makes before it
// waits for the evidence reader: at most two requests each.
const evidenceBatch = 50

// countFdatasyncs runs n fdatasyncs of f on a locked thread under tr
// (loaded with Evidence of at least 3n: every request counted is kept) and
// checks every request block.rq counted against what the kernel says this
// thread caused: each was submitted by this thread, from its fdatasync
// (the kernel stack of its submission) and not from a dispatch of the
// queue; the data writes among them are within 5% of the pages the thread
// dirtied (/proc/thread-self/io), and the rest, the inode's block, number
// at most one per fdatasync.
func countFdatasyncs(t *testing.T, tr *tracing.Tracer, f *os.File, n int) ownRequests {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	before := writeBytes(t, "/proc/thread-self/io")
	// A batch at a time, the ring of evidence emptied between: its 256
	// KiB hold some 300 events, and the reader falls behind on a loaded
	// machine (seen: 207 dropped of 503).
	for done := 0; done < n; done += evidenceBatch {
		fdatasyncs(t, f, min(evidenceBatch, n-done))
		if _, _, err := tr.Evidence(); err != nil {
			t.Fatal(err)
		}
	}
	pages := (writeBytes(t, "/proc/thread-self/io") - before) / 4096
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range hs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff(Metrics, keys); diff != "" {
		t.Fatalf("Read's metrics (-declared +read):\n%s", diff)
	}
	evs, dropped, err := tr.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	var got ownRequests
	got.rq = hs["block.rq"].Count()
	if all := evs["block.rq"]; uint64(len(all)) != got.rq || dropped != 0 {
		t.Fatalf("block.rq counted %d, evidence kept %d (%d dropped): want every one", got.rq, len(all), dropped)
	}
	sym := symbols.NewSymbolizer()
	tid := uint32(unix.Gettid())
	var metaStack string
	for _, e := range evs["block.rq"] {
		frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
		if e.PID != uint32(os.Getpid()) || e.TID != tid {
			t.Errorf("a request of %d/%d (%s) counted, want only this thread's %d: %s", e.PID, e.TID, e.Comm, tid, frames)
			continue
		}
		if !strings.Contains(frames, "fsync") {
			t.Errorf("a request counted not submitted from this thread's fdatasync: %s", frames)
			continue
		}
		if i := slices.IndexFunc(dispatchFrames, func(f string) bool { return strings.Contains(frames, f) }); i >= 0 {
			t.Errorf("a request first seen at its dispatch (%s), another task's, counted: %s", dispatchFrames[i], frames)
			continue
		}
		if strings.Contains(frames, "writepages") {
			got.data++
		} else {
			got.meta++
			metaStack = frames
		}
	}
	t.Logf("%d fdatasyncs: block.rq %d (p50 %v), block.queue %d: %d data writes (%d pages dirtied), %d others, e.g. %s",
		n, got.rq, hs["block.rq"].Quantile(0.5), hs["block.queue"].Count(), got.data, pages, got.meta, metaStack)
	if !within(got.data, pages, 0.05) {
		t.Errorf("block.rq counted %d data writes, the thread dirtied %d pages for %d fdatasyncs: not within 5%%", got.data, pages, n)
	}
	if got.meta > uint64(n) {
		t.Errorf("block.rq counted %d writes besides the data for %d fdatasyncs, at most one each (the inode)", got.meta, n)
	}
	return got
}

// TestCountsFdatasyncs: the tracer counts the requests the workload's
// fdatasyncs made, the data write of each and, on ext4 without a journal,
// the inode table block when the mtime changed (a coarse timestamp ticks
// every jiffy: measured here 9 of 400 in a 33 ms loop, 92 in 868 ms), and
// no more than the disk completed, in both variants; the metrics it
// declares are those Read returns; limited to another device it counts
// none.
func TestCountsFdatasyncs(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	dir := diskDir(t)
	disk := diskOf(t, dir)
	f := openFile(t, dir)
	const n = 400
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: 3 * n}, Variant: v, Devices: []string{disk}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Errorf("variant %s, want %s", got, v)
			}
			before := dataWrites(t, disk)
			got := countFdatasyncs(t, tr, f, n)
			writes := dataWrites(t, disk) - before
			if got.rq > writes {
				t.Errorf("block.rq counted %d, %s completed only %d data writes", got.rq, disk, writes)
			}
			if got.data > n+n/20 || got.data < n-n/20 {
				t.Errorf("block.rq counted %d data writes for %d fdatasyncs, each one", got.data, n)
			}
		})
	}
	t.Run("other device", func(t *testing.T) {
		other := "loop0"
		if disk == other {
			other = "loop1"
		}
		if _, err := os.Stat(filepath.Join("/sys/block", other)); err != nil {
			testenv.Missing(t, testenv.Feature{Name: "a second disk"}, err)
		}
		tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Devices: []string{other}})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		fdatasyncs(t, f, 20)
		hs, err := tr.Read()
		if err != nil {
			t.Fatal(err)
		}
		if c := hs["block.rq"].Count(); c != 0 {
			t.Errorf("limited to %s, block.rq counted %d of the writes to %s", other, c, disk)
		}
	})
}

// writerEnv names the file a re-executed test binary writes as the
// concurrent writer of TestConcurrentWriterNotCounted.
const writerEnv = "TAILGATE_BLOCK_TEST_WRITER"

// writeForever writes files of 4 MiB in dir, fdatasyncs and removes each
// (where the filesystem discards what a file frees, as /var/tmp's here
// does, a discard for each), until killed; it says "ready" after the
// first.
func writeForever(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(3)
	}
	b := make([]byte, 4<<20)
	path := filepath.Join(dir, "writer")
	for i := 0; ; i++ {
		b[0] = byte(i)
		f, err := os.Create(path)
		if err != nil {
			fail(err)
		}
		if _, err := f.Write(b); err != nil {
			fail(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			fail(err)
		}
		f.Close()
		if err := os.Remove(path); err != nil {
			fail(err)
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

// TestConcurrentWriterNotCounted: while another process writes to the same
// disk (1 MiB writes and an fdatasync each, requests its own and the
// flusher's that the workload's fdatasyncs may dispatch when they run the
// queue), block.rq counts the workload's requests as TestCountsFdatasyncs
// does and none of the writer's, in both variants.
func TestConcurrentWriterNotCounted(t *testing.T) {
	if path := os.Getenv(writerEnv); path != "" {
		writeForever(path)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	dir := diskDir(t)
	disk := diskOf(t, dir)
	f := openFile(t, dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWriterNotCounted$")
	cmd.Env = append(os.Environ(), writerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &unix.SysProcAttr{Pdeathsig: unix.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make([]byte, 6)
	if _, err := io.ReadFull(out, ready); err != nil || string(ready) != "ready\n" {
		t.Fatalf("writer: %q, %v", ready, err)
	}
	const n = 400
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: 3 * n}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			// The writer may be held up (a VM boot beside): up to three
			// rounds, each checked, for one with its writes among ours.
			var got ownRequests
			var writes uint64
			for round := 0; round < 3; round++ {
				before := dataWrites(t, disk)
				got = countFdatasyncs(t, tr, f, n)
				writes = dataWrites(t, disk) - before
				t.Logf("round %d: %s completed %d data writes, the writer's %d", round, disk, writes, writes-got.rq)
				if writes >= got.rq+n/10 {
					return
				}
			}
			t.Fatalf("%s completed %d data writes, block.rq counted %d: the writer wrote too little to tell (fewer than %d)", disk, writes, got.rq, n/10)
		})
	}
}

func within(got, want uint64, frac float64) bool {
	d := float64(got) - float64(want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}

// TestOtherProcessNotCounted: a tracer of another process counts none of
// this one's writes.
func TestOtherProcessNotCounted(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	f := openFile(t, diskDir(t))
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getppid())}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	fdatasyncs(t, f, 50)
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if c := hs["block.rq"].Count(); c != 0 {
		t.Errorf("a tracer of pid %d counted %d of this process's writes", os.Getppid(), c)
	}
}

// TestEvidence: the registry entry passes the evidence K; the slowest
// requests name this process's thread as the submitter, with the stack of
// its fdatasync.
func TestEvidence(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	f := openFile(t, diskDir(t))
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: 3}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := tr.AddThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			fdatasyncs(t, f, 30)
			evs, _, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			got := evs["block.rq"]
			if len(got) != 3 {
				t.Fatalf("%d block.rq events kept, want the 3 asked for", len(got))
			}
			sym := symbols.NewSymbolizer()
			for _, e := range got {
				if e.TID != uint32(unix.Gettid()) || e.PID != uint32(os.Getpid()) {
					t.Errorf("event of %d/%d (%s), want this thread %d", e.PID, e.TID, e.Comm, unix.Gettid())
				}
				frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
				if !strings.Contains(frames, "fdatasync") && !strings.Contains(frames, "fsync") {
					t.Errorf("submitter's stack has no fdatasync: %s", frames)
				}
			}
		})
	}
}

// TestKindProbe: the registry's probe config loads here.
func TestKindProbe(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := Tracer.New(Tracer.Probe, tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
}
