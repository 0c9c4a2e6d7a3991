package sched

import (
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// BenchmarkEvidenceCost measures what evidence costs the scheduler
// tracer, per program run as the kernel counts it (run-time statistics)
// and per round trip of a pipe ping-pong between two threads of this
// process, both counted by the tracer: without evidence, with the default
// 10 slowest per metric, and with the interference log loaded and walked;
// and the raw_tp variant without and with evidence, which keeps a stack at
// every switch-out of a traced task (tp_btf reads it only for the events
// kept).
//
//	go test ./bpf/sched/ -run '^$' -bench EvidenceCost -benchtime 10x
func BenchmarkEvidenceCost(b *testing.B) {
	if err := rlimit.RemoveMemlock(); err != nil {
		b.Fatal(err)
	}
	const trips = 20000
	ilog, err := interfere.Load(interfere.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ilog.Close()
	type variant struct {
		name string
		opts Options
	}
	variants := []variant{
		{"tracer", Options{}},
		{"evidence", Options{TracerOptions: tracing.TracerOptions{Evidence: 10}}},
		{"interference", Options{TracerOptions: tracing.TracerOptions{Evidence: 10, Interference: ilog.Map()}}},
		{"raw_tp-tracer", Options{Variant: tracing.RawTP}},
		{"raw_tp-evidence", Options{TracerOptions: tracing.TracerOptions{Evidence: 10}, Variant: tracing.RawTP}},
	}
	perTrip := map[string][]float64{}
	perRun := map[string][]float64{}
	for range b.N {
		for _, v := range variants {
			o := v.opts
			o.TGID, o.Threads = uint32(os.Getpid()), true
			tr, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
			if err != nil {
				b.Fatal(err)
			}
			before, _ := tr.RunStats()
			d := pingPong(b, tr, trips)
			after, _ := tr.RunStats()
			st.Close()
			if _, _, err := tr.Evidence(); err != nil {
				b.Fatal(err)
			}
			tr.Close()
			perTrip[v.name] = append(perTrip[v.name], float64(d.Nanoseconds())/trips)
			perRun[v.name] = append(perRun[v.name], after.Sub(before).PerRun())
		}
	}
	med := func(xs []float64) float64 {
		xs = append([]float64(nil), xs...)
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(0, "ns/op")
	for _, v := range variants {
		b.ReportMetric(med(perTrip[v.name]), "ns/trip:"+v.name)
		b.ReportMetric(med(perRun[v.name]), "ns/run:"+v.name)
	}
	b.ReportMetric(med(perRun["evidence"])/med(perRun["tracer"]), "run-ratio:evidence/tracer")
	b.ReportMetric(med(perRun["interference"])/med(perRun["tracer"]), "run-ratio:interference/tracer")
	b.ReportMetric(med(perTrip["evidence"])/med(perTrip["tracer"]), "trip-ratio:evidence/tracer")
	b.ReportMetric(med(perRun["raw_tp-evidence"])/med(perRun["raw_tp-tracer"]), "run-ratio:raw_tp-evidence/raw_tp-tracer")
	b.ReportMetric(med(perTrip["raw_tp-evidence"])/med(perTrip["raw_tp-tracer"]), "trip-ratio:raw_tp-evidence/raw_tp-tracer")
}

// pingPong runs n round trips over two pipes between this thread and
// another, both added to tr, and returns the time they took.
func pingPong(b *testing.B, tr *tracing.Tracer, n int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ab, ba [2]int
	if err := unix.Pipe(ab[:]); err != nil {
		b.Fatal(err)
	}
	if err := unix.Pipe(ba[:]); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, fd := range []int{ab[0], ab[1], ba[0], ba[1]} {
			unix.Close(fd)
		}
	}()
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		ready <- tr.AddThread(unix.Gettid())
		buf := make([]byte, 1)
		for range n {
			if _, err := unix.Read(ab[0], buf); err != nil {
				return
			}
			if _, err := unix.Write(ba[1], buf); err != nil {
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		b.Fatal(err)
	}
	if err := tr.AddThread(unix.Gettid()); err != nil {
		b.Fatal(err)
	}
	if err := tr.Reset(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1)
	start := time.Now()
	for range n {
		if _, err := unix.Write(ab[1], buf); err != nil {
			b.Fatal(err)
		}
		if _, err := unix.Read(ba[0], buf); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	<-done
	return d
}
