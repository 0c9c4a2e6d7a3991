package offcpu

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// With a cgroup the tracer counts the off-CPU time of the group's tasks,
// not this process's, although TGID names it.
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
			runtime.LockOSThread()
			nanosleeps(t, 100, 5*time.Millisecond) // this process: not counted
			runtime.UnlockOSThread()
			// A shell in the group sleeping 20 ms five times, in child
			// processes it waits for.
			sh := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do sleep 0.02; done")
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
			b := hs["offcpu.blocked"]
			t.Logf("offcpu.blocked: %d events, p50 %v, max %v", b.Count(), time.Duration(b.Quantile(0.5)), time.Duration(b.Quantile(1)))
			// Five sleeps of 20 ms and the shell's five waits for them, at
			// least; this process's hundred sleeps of 5 ms are not there.
			if n := b.Count(); n < 10 || n > 90 {
				t.Errorf("offcpu.blocked counted %d, want the group's dozens, not this process's 100 sleeps", n)
			}
			if q := time.Duration(b.Quantile(0.9)); q < 15*time.Millisecond {
				t.Errorf("offcpu.blocked p90 %v: the group's 20 ms sleeps are not in its top tenth", q)
			}
		})
	}
}
