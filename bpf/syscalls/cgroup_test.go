package syscalls

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// With a cgroup the tracer counts the group's tasks, its own and those of
// a group below it, and not this process's, although TGID names it.
func TestTracerCountsCgroup(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	sub := filepath.Join(g.Path, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	subg, err := cgroup.Open(sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), CgroupID: g.ID}, Syscalls: []string{"read"}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			const n = 3000
			// Reads of this process, which must not count.
			f, err := os.Open("/dev/zero")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			runtime.LockOSThread()
			for range 2 * n {
				unix.Read(int(f.Fd()), buf)
			}
			runtime.UnlockOSThread()
			for _, in := range []*cgroup.Group{g, subg} {
				dd := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=4096", "count="+strconv.Itoa(n))
				if err := in.Start(dd); err != nil {
					t.Fatal(err)
				}
				if err := dd.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			// dd reads its input n times, and a few times more while it
			// loads (the dynamic loader, locale files).
			t.Logf("counted %d reads", hs["syscall.read"].Count())
			if got := hs["syscall.read"].Count(); got < 2*n || got > 2*n+100 {
				t.Errorf("counted %d reads; the two dd made %d and this process %d", got, 2*n, 2*n)
			}
		})
	}
}
