package block_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/block"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestFsyncWorkload runs the fsync workload as a trial does: the tracer
// counts only the threads the workload registers through its ThreadHook.
// Each fdatasync that reaches the disk is a data write of theirs, and now
// and then one writes the inode too (its timestamps): block.rq is within
// 5% of the data writes the disk completed, and within 10% of the
// fdatasyncs; block.queue too where requests go through an I/O scheduler
// (with none they are issued directly, and block.queue counts none).
func TestFsyncWorkload(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := block.New(block.Options{TGID: uint32(os.Getpid()), Threads: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := block.DiskDir(t)
	disk := block.DiskOf(t, dir)
	r, err := scenarios.NewWorkload(scenarios.Workload{Kind: "fsync", Threads: 2, Params: &scenarios.Fsync{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hook := func(tid int, running bool) {
		var err error
		if running {
			err = tr.AddThread(tid)
		} else {
			err = tr.RemoveThread(tid)
		}
		if err != nil {
			t.Error(err)
		}
	}
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	before := block.DataWrites(t, disk)
	ctx, cancel := context.WithTimeout(scenarios.WithThreadHook(context.Background(), hook), 300*time.Millisecond)
	st, err := r.Run(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	writes := block.DataWrites(t, disk) - before
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	rq, queue := hs["block.rq"].Count(), hs["block.queue"].Count()
	t.Logf("%d fdatasyncs: block.rq %d, block.queue %d; %s completed %d data writes", st.Ops, rq, queue, disk, writes)
	if st.Ops < 50 {
		t.Fatalf("only %d fdatasyncs in 300ms", st.Ops)
	}
	if !within(rq, writes, 0.05) {
		t.Errorf("block.rq counted %d, %s completed %d data writes: not within 5%%", rq, disk, writes)
	}
	if !within(rq, st.Ops, 0.10) {
		t.Errorf("block.rq counted %d for %d fdatasyncs, not within 10%%", rq, st.Ops)
	}
	if sched := scheduler(t, disk); sched != "none" && !within(queue, writes, 0.05) {
		t.Errorf("block.queue counted %d, %s completed %d data writes: not within 5%% (I/O scheduler %s)", queue, disk, writes, sched)
	}
}

// scheduler returns the disk's I/O scheduler, the bracketed name in
// /sys/block/<disk>/queue/scheduler.
func scheduler(t *testing.T, disk string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/block/" + disk + "/queue/scheduler")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i, j := strings.Index(s, "["), strings.Index(s, "]"); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return strings.TrimSpace(s)
}

func within(got, want uint64, frac float64) bool {
	d := float64(got) - float64(want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}

// TestFsyncScratchWorkload runs the fsync kind on a loop device of its own
// (device: scratch) as a trial does. Every request the workload's threads
// make is to that device (its backing file is written by the loop driver's
// kworker, which is not counted): block.rq is within 5% of the
// fdatasyncs, and within 5% of the data writes the loop device itself
// completed (its writes less its flushes).
func TestFsyncScratchWorkload(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := block.New(block.Options{TGID: uint32(os.Getpid()), Threads: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := scenarios.NewWorkload(scenarios.Workload{Kind: "fsync", Threads: 2, Params: &scenarios.Fsync{Dir: t.TempDir(), Device: scenarios.FsyncDeviceScratch}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hook := func(tid int, running bool) {
		var err error
		if running {
			err = tr.AddThread(tid)
		} else {
			err = tr.RemoveThread(tid)
		}
		if err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	st, err := r.Run(ctx) // to learn the device's name
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if st.Device == nil || !strings.HasPrefix(st.Device.Name, "loop") {
		t.Fatalf("Stats.Device = %+v, want a loop device", st.Device)
	}
	loop := st.Device.Name
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	before := block.DataWrites(t, loop)
	ctx, cancel = context.WithTimeout(scenarios.WithThreadHook(context.Background(), hook), 300*time.Millisecond)
	st, err = r.Run(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	writes := block.DataWrites(t, loop) - before
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	rq := hs["block.rq"].Count()
	t.Logf("%d fdatasyncs on %s: block.rq %d, block.queue %d; %s completed %d data writes", st.Ops, loop, rq, hs["block.queue"].Count(), loop, writes)
	if st.Ops < 50 {
		t.Fatalf("only %d fdatasyncs in 300ms", st.Ops)
	}
	if !within(rq, st.Ops, 0.05) {
		t.Errorf("block.rq counted %d for %d fdatasyncs, not within 5%%", rq, st.Ops)
	}
	if !within(rq, writes, 0.05) {
		t.Errorf("block.rq counted %d, %s completed %d data writes: not within 5%%", rq, loop, writes)
	}
}
