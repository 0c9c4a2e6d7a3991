package block

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
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
			f, err := parser.ParseBytes([]byte(tc.src), 0)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := config.NewNode("test.yaml", f.Docs[0].Body).Fields("tracers", nil)
			if err != nil || len(fs) != 1 {
				t.Fatalf("fields: %v, %v", fs, err)
			}
			c, err := Tracer.Parse(fs[0], tracing.Workload{})
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
	_, err := New(Options{TGID: uint32(os.Getpid()), Devices: []string{"no-such-disk"}})
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
// block is allocated beforehand, so no journal commit is needed).
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

// TestCountsFdatasyncs: the tracer counts one block.rq per fdatasync that
// reached the disk (its data write), within 5% of the data writes the disk
// says it completed, in both variants; the metrics it declares are those Read returns; limited
// to another device it counts none.
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
			tr, err := New(Options{TGID: uint32(os.Getpid()), Variant: v, Devices: []string{disk}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Errorf("variant %s, want %s", got, v)
			}
			// Other writers of the machine share the disk: up to three
			// rounds for one where the disk's count is within 5%.
			var rq, writes uint64
			for round := 0; round < 3; round++ {
				if err := tr.Reset(); err != nil {
					t.Fatal(err)
				}
				before := dataWrites(t, disk)
				fdatasyncs(t, f, n)
				writes = dataWrites(t, disk) - before
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
				rq = hs["block.rq"].Count()
				t.Logf("round %d: %d fdatasyncs, block.rq %d (p50 %v), block.queue %d, %s wrote %d", round, n, rq, hs["block.rq"].Quantile(0.5), hs["block.queue"].Count(), disk, writes)
				if within(rq, writes, 0.05) {
					break
				}
			}
			if !within(rq, writes, 0.05) {
				t.Errorf("block.rq counted %d, %s completed %d data writes for %d fdatasyncs: not within 5%%", rq, disk, writes, n)
			}
			if rq > n+n/20 || rq < n-n/20 {
				t.Errorf("block.rq counted %d for %d fdatasyncs, each one write", rq, n)
			}
		})
	}
	t.Run("other device", func(t *testing.T) {
		other := "loop0"
		if disk == other {
			other = "loop1"
		}
		if _, err := os.Stat(filepath.Join("/sys/block", other)); err != nil {
			t.Skipf("needs a second disk: %v", err)
		}
		tr, err := New(Options{TGID: uint32(os.Getpid()), Devices: []string{other}})
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
	tr, err := New(Options{TGID: uint32(os.Getppid())})
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
			tr, err := New(Options{TGID: uint32(os.Getpid()), Variant: v, Threads: true, Evidence: 3})
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
			sym := tracing.NewSymbolizer()
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
