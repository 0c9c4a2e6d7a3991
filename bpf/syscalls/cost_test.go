package syscalls

import (
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// BenchmarkTracerCost measures what tracing costs a traced syscall: getppid
// in a loop with no BPF attached, with empty programs on sys_enter/sys_exit,
// with programs that only read the clock there (the floor of any latency
// tracer), with the syscall tracer counting it, and with the tracer
// keeping evidence (the 10 slowest). The three interleave in rounds so
// that drift on a shared machine hits all alike; the reported figures are
// medians over rounds and their ratios.
//
//	go test ./bpf/syscalls/ -run '^$' -bench TracerCost -benchtime 20x
func BenchmarkTracerCost(b *testing.B) {
	if err := rlimit.RemoveMemlock(); err != nil {
		b.Fatal(err)
	}
	const calls = 200000
	// Every loop runs on this one thread, which the tracer counts as the
	// workload's (Threads, as tailgate runs it).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	loop := func() float64 {
		start := time.Now()
		for range calls {
			unix.Getppid()
		}
		return float64(time.Since(start).Nanoseconds()) / calls
	}
	var objs emptyObjects
	if err := loadEmptyObjects(&objs, nil); err != nil {
		b.Fatal(err)
	}
	defer objs.Close()
	attach := func(enter, exit *ebpf.Program) (func(), []*ebpf.Program) {
		l1, err := link.AttachTracing(link.TracingOptions{Program: enter})
		if err != nil {
			b.Fatal(err)
		}
		l2, err := link.AttachTracing(link.TracingOptions{Program: exit})
		if err != nil {
			b.Fatal(err)
		}
		return func() { l1.Close(); l2.Close() }, []*ebpf.Program{enter, exit}
	}
	var none, empty, clock, traced, evidence, interfered []float64
	var bpfEmpty, bpfTracer, bpfLog []float64
	for range b.N {
		none = append(none, loop())

		detach, progs := attach(objs.EmptyEnter, objs.EmptyExit)
		empty = append(empty, loop())
		bpfEmpty = append(bpfEmpty, runStats(progs, loop))
		detach()

		detach, _ = attach(objs.ClockEnter, objs.ClockExit)
		clock = append(clock, loop())
		detach()

		tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}, Syscalls: []string{"getppid"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.AddThread(unix.Gettid()); err != nil {
			b.Fatal(err)
		}
		traced = append(traced, loop())

		// Run-time statistics add two clock reads to every program run, so
		// the kernel's per-run figure is taken in a pass of its own.
		st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
		if err != nil {
			b.Fatal(err)
		}
		before, _ := tr.RunStats()
		loop()
		after, _ := tr.RunStats()
		st.Close()
		bpfTracer = append(bpfTracer, after.Sub(before).PerRun())
		tr.Close()

		// With evidence (the default 10 per metric): after the first
		// events fill the top, each call costs a floor lookup.
		tr, err = New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: 10}, Syscalls: []string{"getppid"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.AddThread(unix.Gettid()); err != nil {
			b.Fatal(err)
		}
		if err := tr.Reset(); err != nil {
			b.Fatal(err)
		}
		evidence = append(evidence, loop())
		tr.Close()

		// With evidence and the interference log: the log's programs run
		// on every interrupt and switch of the machine, not on the
		// syscall; the tracer walks the log only for events it keeps.
		ilog, err := interfere.Load(interfere.Options{})
		if err != nil {
			b.Fatal(err)
		}
		tr, err = New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: 10, Interference: ilog.Map()}, Syscalls: []string{"getppid"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.AddThread(unix.Gettid()); err != nil {
			b.Fatal(err)
		}
		if err := tr.Reset(); err != nil {
			b.Fatal(err)
		}
		interfered = append(interfered, loop())
		st, err = ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
		if err != nil {
			b.Fatal(err)
		}
		before, _ = ilog.RunStats()
		loop()
		after, _ = ilog.RunStats()
		st.Close()
		bpfLog = append(bpfLog, after.Sub(before).PerRun())
		tr.Close()
		ilog.Close()
	}
	med := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(med(none), "ns/syscall-none")
	b.ReportMetric(med(empty), "ns/syscall-empty")
	b.ReportMetric(med(clock), "ns/syscall-clock")
	b.ReportMetric(med(traced), "ns/syscall-tracer")
	b.ReportMetric(med(clock)/med(empty), "clock/empty")
	b.ReportMetric(med(traced)/med(clock), "tracer/clock")
	b.ReportMetric(med(traced)/med(empty), "tracer/empty")
	b.ReportMetric(med(traced)/med(none), "tracer/none")
	b.ReportMetric(med(evidence), "ns/syscall-evidence")
	b.ReportMetric(med(evidence)/med(traced), "evidence/tracer")
	b.ReportMetric(med(interfered), "ns/syscall-interference")
	b.ReportMetric(med(interfered)/med(evidence), "interference/evidence")
	b.ReportMetric(med(interfered)/med(traced), "interference/tracer")
	b.ReportMetric(med(bpfLog), "bpf-ns/run-log")
	b.ReportMetric(med(bpfTracer), "bpf-ns/run-tracer")
	b.ReportMetric(med(bpfEmpty), "bpf-ns/run-empty")
}

// runStats runs f with BPF run-time statistics on and returns the mean run
// time per program run of progs.
func runStats(progs []*ebpf.Program, f func() float64) float64 {
	st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return 0
	}
	defer st.Close()
	sum := func() (time.Duration, uint64) {
		var d time.Duration
		var n uint64
		for _, p := range progs {
			if s, err := p.Stats(); err == nil {
				d += s.Runtime
				n += s.RunCount
			}
		}
		return d, n
	}
	d0, n0 := sum()
	f()
	d1, n1 := sum()
	if n1 == n0 {
		return 0
	}
	return float64((d1 - d0).Nanoseconds()) / float64(n1-n0)
}
