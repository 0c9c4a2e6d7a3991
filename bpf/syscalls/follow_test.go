package syscalls

import (
	"os/exec"
	"testing"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// A process followed from user space counts, and so do the processes it
// forks afterwards: a process tree that ran before the tracer attached.
func TestFollowProcess(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	// A tgid nobody has: only what is followed counts.
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1 << 30}, Syscalls: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const n = 2000
	sh := exec.Command("sh", "-c", "read x; dd if=/dev/zero of=/dev/null bs=4096 count=2000 2>/dev/null")
	in, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	// Reads of a process not followed do not count.
	if err := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=4096", "count=2000").Run(); err != nil {
		t.Fatal(err)
	}
	if err := tr.FollowProcess(sh.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := tr.FollowProcess(sh.Process.Pid); err != nil {
		t.Fatalf("following a followed process again: %v", err)
	}
	in.Write([]byte("go\n"))
	in.Close()
	if err := sh.Wait(); err != nil {
		t.Fatal(err)
	}
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	// The shell's read of its line (a byte at a time) and dd's, its own
	// few while it loads included.
	if got := hs["syscall.read"].Count(); got < n || got > n+40 {
		t.Errorf("counted %d reads; the followed shell and its dd made about %d", got, n+4)
	}
}
