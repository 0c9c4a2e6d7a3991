package request

import (
	"os"
	"runtime"
	"sort"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// BenchmarkTracerCost measures what the request tracer costs a request:
// 64-byte requests over a loopback TCP connection, both ends in one
// thread (the client writes, the server's end reads it and writes the
// answer back, the client reads it), so that no scheduling and no wakeup
// is in the figure, only the syscalls and the tracer's program on each
// one's exit: the server end's read and write take the tracer's whole
// path, the client end's the lookup that finds it is a client's. Each
// triple of blocks runs with no BPF attached, with the tracer attached
// but this thread not counted (the filter every task of the machine
// passes), and with this thread counted, in an order that rotates, so
// that the three share the machine's state; the time is the thread's CPU
// time (on a shared machine its waits for a CPU would be most of the wall
// time, and they are not the tracer's). Reported: medians over triples of
// each block's time per request and of the differences within a triple.
// The programs stay verified between triples (tracing.Loaded): only the
// attachment comes and goes.
//
// Reported too: what the tracer adds to a syscall that is no socket's
// (getppid), of a task it does not count: what the rest of the machine
// pays. Each variant is a sub-benchmark: tp_btf works at the socket layer where
// the kernel has it, raw_tp at the syscall exit; tp_btf+queue measures
// request.queue too (a program on each data arrival).
//
//	go test ./bpf/request/ -run '^$' -bench TracerCost -benchtime 100x
func BenchmarkTracerCost(b *testing.B) {
	if err := rlimit.RemoveMemlock(); err != nil {
		b.Fatal(err)
	}
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		b.Run(string(v), func(b *testing.B) { tracerCost(b, v, false) })
	}
	b.Run("tp_btf+queue", func(b *testing.B) { tracerCost(b, tracing.TPBTF, true) })
}

// tracerCost measures variant v, with request.queue when queue is set.
func tracerCost(b *testing.B, v tracing.Variant, queue bool) {
	const requests = 2000
	client, server := tcpPair(b)
	defer unix.Close(client)
	defer unix.Close(server)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	buf := make([]byte, 64)
	cpuTime := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			b.Fatal(err)
		}
		return ts.Nano()
	}
	block := func() float64 {
		start := cpuTime()
		for range requests {
			unix.Write(client, buf)
			unix.Read(server, buf)
			unix.Write(server, buf)
			unix.Read(client, buf)
		}
		return float64(cpuTime()-start) / requests
	}
	// A syscall that is no socket's, what every other task of the
	// machine pays while the tracer is attached.
	other := func() float64 {
		start := cpuTime()
		for range 4 * requests {
			unix.Getppid()
		}
		return float64(cpuTime()-start) / (4 * requests)
	}
	objs := tracing.NewLoaded()
	defer objs.Close()
	var none, filtered, counted, filter, added, work, otherAdded []float64
	for i := range b.N {
		var t [3]float64 // none, filtered, counted
		var o [3]float64 // the other syscall's, likewise
		for j := range 3 {
			arm := (i + j) % 3
			if arm == 0 {
				t[0], o[0] = block(), other()
				continue
			}
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Loaded: objs}, Variant: v, Queue: queue})
			if err != nil {
				b.Fatal(err)
			}
			if arm == 2 {
				if err := tr.AddThread(tid); err != nil {
					b.Fatal(err)
				}
			}
			t[arm], o[arm] = block(), other()
			hs, err := tr.Read()
			if err != nil {
				b.Fatal(err)
			}
			want := uint64(0)
			if arm == 2 {
				want = requests
			}
			if n := hs[MetricServer].Count(); n+1 < want || n > want {
				b.Fatalf("the tracer counted %d requests, want %d", n, want)
			}
			tr.Close()
			if err := objs.Detach(); err != nil {
				b.Fatal(err)
			}
		}
		none, filtered, counted = append(none, t[0]), append(filtered, t[1]), append(counted, t[2])
		filter = append(filter, t[1]-t[0])
		added = append(added, t[2]-t[0])
		work = append(work, t[2]-t[1])
		otherAdded = append(otherAdded, o[1]-o[0])
	}
	med := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(med(none), "ns/request-none")
	b.ReportMetric(med(filtered), "ns/request-filtered")
	b.ReportMetric(med(counted), "ns/request-counted")
	b.ReportMetric(med(filter), "ns/request-filter")
	b.ReportMetric(med(work), "ns/request-work")
	b.ReportMetric(med(added), "ns/request-added")
	b.ReportMetric(med(counted)/med(none), "counted/none")
	b.ReportMetric(med(otherAdded), "ns/other-syscall-added")
}

// listener returns a loopback TCP socket listening, and its address.
func listener(b testing.TB) (int, unix.Sockaddr) {
	b.Helper()
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	if err := unix.Listen(ln, 1); err != nil {
		b.Fatal(err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		b.Fatal(err)
	}
	return ln, sa
}

// tcpPair makes a loopback TCP connection with TCP_NODELAY on both ends.
func tcpPair(b testing.TB) (client, server int) {
	b.Helper()
	ln, sa := listener(b)
	defer unix.Close(ln)
	var err error
	if client, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		b.Fatal(err)
	}
	if err := unix.Connect(client, sa); err != nil {
		b.Fatal(err)
	}
	if server, _, err = unix.Accept4(ln, unix.SOCK_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	for _, fd := range []int{client, server} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			b.Fatal(err)
		}
	}
	return client, server
}

// BenchmarkEvidenceCost measures what evidence adds to a counted request,
// the stack samples of open requests (sample.bpf.h) with it: the same
// requests as BenchmarkTracerCost's, counted by the tracer loaded without
// evidence and with it, and with no BPF, in rotating order within each
// triple. With evidence the request's read also marks its task, the
// answer checks the evidence floor, and the perf event of each CPU
// interrupts the thread every 250 µs of its CPU time to take its stacks
// (it is in a request about half of that time): what the thread's CPU
// time shows of all that, per request.
//
//	go test ./bpf/request/ -run '^$' -bench EvidenceCost -benchtime 100x
func BenchmarkEvidenceCost(b *testing.B) {
	if err := rlimit.RemoveMemlock(); err != nil {
		b.Fatal(err)
	}
	const requests = 2000
	client, server := tcpPair(b)
	defer unix.Close(client)
	defer unix.Close(server)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	buf := make([]byte, 64)
	cpuTime := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			b.Fatal(err)
		}
		return ts.Nano()
	}
	block := func() float64 {
		start := cpuTime()
		for range requests {
			unix.Write(client, buf)
			unix.Read(server, buf)
			unix.Write(server, buf)
			unix.Read(client, buf)
		}
		return float64(cpuTime()-start) / requests
	}
	plain, withEvidence := tracing.NewLoaded(), tracing.NewLoaded()
	defer plain.Close()
	defer withEvidence.Close()
	var none, counted, evidence, added []float64
	samples := 0
	for i := range b.N {
		var t [3]float64 // none, counted, counted with evidence
		for j := range 3 {
			arm := (i + j) % 3
			if arm == 0 {
				t[0] = block()
				continue
			}
			o := tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Loaded: plain}
			if arm == 2 {
				o.Loaded, o.Evidence = withEvidence, 10
			}
			tr, err := New(Options{TracerOptions: o})
			if err != nil {
				b.Fatal(err)
			}
			if err := tr.AddThread(tid); err != nil {
				b.Fatal(err)
			}
			t[arm] = block()
			hs, err := tr.Read()
			if err != nil {
				b.Fatal(err)
			}
			if n := hs[MetricServer].Count(); n+1 < requests || n > requests {
				b.Fatalf("the tracer counted %d requests, want %d", n, requests)
			}
			if arm == 2 {
				reqs, _, err := tr.Samples()
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range reqs {
					samples += len(r.Stacks)
				}
			}
			tr.Close()
			if err := o.Loaded.Detach(); err != nil {
				b.Fatal(err)
			}
		}
		none, counted, evidence = append(none, t[0]), append(counted, t[1]), append(evidence, t[2])
		added = append(added, t[2]-t[1])
	}
	med := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(med(none), "ns/request-none")
	b.ReportMetric(med(counted), "ns/request-counted")
	b.ReportMetric(med(evidence), "ns/request-evidence")
	b.ReportMetric(med(added), "ns/request-evidence-added")
	b.ReportMetric(float64(samples)/float64(b.N), "samples/block")
}
