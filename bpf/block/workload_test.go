package block_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/block"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestFsyncWorkload runs the fsync workload as a trial does: the tracer
// counts only the threads the workload registers through its ThreadHook.
// Each fdatasync that reaches the disk is a data write of theirs, and on
// ext4 without a journal a write of the inode table block too when the
// file's mtime changed since the last one (each jiffy: from 4% of the
// fdatasyncs when they are quick to 60% beside another writer). block.rq
// counts at least 95% of the pages the process dirtied (/proc/self/io),
// at most one more request per fdatasync, and no more than the disk
// completed, which counts other processes' writes too. Where requests go
// through an I/O scheduler each counted is one the workload inserted:
// block.queue counts at least as many (one first seen at its issue was
// another task's, dispatched from the workload's context); with none they
// are issued directly, and block.queue counts none.
func TestFsyncWorkload(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := block.New(block.Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}})
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
	hook := tracingtest.ThreadHook(t, tr)
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	before, dirtied := block.DataWrites(t, disk), block.WriteBytes(t, "/proc/self/io")
	ctx, cancel := context.WithTimeout(scenarios.WithThreadHook(context.Background(), hook), 300*time.Millisecond)
	st, err := r.Run(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	writes := block.DataWrites(t, disk) - before
	pages := (block.WriteBytes(t, "/proc/self/io") - dirtied) / 4096
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	rq, queue := hs["block.rq"].Count(), hs["block.queue"].Count()
	t.Logf("%d fdatasyncs: block.rq %d, block.queue %d; %d pages dirtied; %s completed %d data writes", st.Ops, rq, queue, pages, disk, writes)
	// Beside another writer an fdatasync may take 50 ms; the counts below
	// hold at any number.
	if st.Ops == 0 {
		t.Fatal("no fdatasync in 300ms")
	}
	if float64(rq) < 0.95*float64(pages) {
		t.Errorf("block.rq counted %d, the workload dirtied %d pages for %d fdatasyncs: fewer than 95%%", rq, pages, st.Ops)
	}
	if rq > pages+st.Ops {
		t.Errorf("block.rq counted %d for %d pages dirtied and %d fdatasyncs: more than one besides the data per fdatasync", rq, pages, st.Ops)
	}
	if rq > writes {
		t.Errorf("block.rq counted %d, %s completed only %d data writes", rq, disk, writes)
	}
	if sched := scheduler(t, disk); sched != "none" && queue < rq {
		t.Errorf("block.rq counted %d, block.queue %d: %d not inserted by the workload (I/O scheduler %s)", rq, queue, rq-queue, sched)
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
	tr, err := block.New(block.Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := scenarios.NewWorkload(scenarios.Workload{Kind: "fsync", Threads: 2, Params: &scenarios.Fsync{Dir: t.TempDir(), Device: scenarios.FsyncDeviceScratch}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hook := tracingtest.ThreadHook(t, tr)
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
	// Beside another writer an fdatasync may take 50 ms; the counts below
	// hold at any number.
	if st.Ops == 0 {
		t.Fatal("no fdatasync in 300ms")
	}
	if !within(rq, st.Ops, 0.05) {
		t.Errorf("block.rq counted %d for %d fdatasyncs, not within 5%%", rq, st.Ops)
	}
	if !within(rq, writes, 0.05) {
		t.Errorf("block.rq counted %d, %s completed %d data writes: not within 5%%", rq, loop, writes)
	}
}
