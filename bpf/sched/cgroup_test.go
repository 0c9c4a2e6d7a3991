package sched

import (
	"os"
	"os/exec"
	"testing"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// With a cgroup the tracer counts the wakeups of the group's tasks, seen
// from whatever task wakes them, and not this process's, although TGID
// names it.
func TestTracerCountsCgroup(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), CgroupID: g.ID}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			pingpong(t, 2000) // this process: not counted
			// A shell in the group forking children, each woken new.
			const children = 10
			sh := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done")
			if err := g.Start(sh); err != nil {
				t.Fatal(err)
			}
			if err := sh.Wait(); err != nil {
				t.Fatal(err)
			}
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			missed, err := tr.Missed()
			if err != nil {
				t.Fatal(err)
			}
			// The shell and its ten children: eleven new tasks of the group
			// (one loss allowed, as in TestTracerSeesWakeupsAndForks).
			if n := hs["sched.wakeup_new"].Count(); n+missed < children || n > children+1 {
				t.Errorf("sched.wakeup_new counted %d and missed %d, want %d: the shell and its %d children", n, missed, children+1, children)
			}
			// The ping-pong's 4000 wakeups are not the group's; the shell's
			// waits for its children are.
			if n := hs["sched.runq"].Count(); n < children || n > 1000 {
				t.Errorf("sched.runq counted %d, want the group's few dozen, not this process's ping-pong", n)
			}
		})
	}
}
