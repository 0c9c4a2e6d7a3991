package irq

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/tracing"
)

var variants = []tracing.Variant{tracing.TPBTF, tracing.RawTP}

// tcpPingPong bounces a byte over a TCP loopback connection rounds times.
// Each packet on loopback is received in a net_rx softirq. With cpu >= 0
// both ends run pinned to it.
func tcpPingPong(t *testing.T, rounds, cpu int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if cpu >= 0 {
			pin(cpu)
		}
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(c, c)
		errc <- err
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cpu >= 0 {
		restore := pin(cpu)
		defer restore()
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetNoDelay(true)
	b := []byte{0}
	for range rounds {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// pin binds the calling (locked) thread to cpu and returns what undoes it.
func pin(cpu int) func() {
	var old, set unix.CPUSet
	unix.SchedGetaffinity(0, &old)
	set.Set(cpu)
	unix.SchedSetaffinity(0, &set)
	return func() { unix.SchedSetaffinity(0, &old) }
}

// fsyncs writes and fsyncs a file in dir n times: block I/O, whose
// completions are the disk's hardirqs and block softirqs.
func fsyncs(t *testing.T, dir string, n int) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fsync"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 4096)
	for i := range n {
		if _, err := f.WriteAt(b, int64(i)*4096); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// softirqCounts reads /proc/softirqs: per vector (lower case), per CPU.
func softirqCounts(t *testing.T) map[string][]uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/softirqs")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint64{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var cs []uint64
		for _, s := range f[1:] {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("/proc/softirqs: %q: %v", line, err)
			}
			cs = append(cs, n)
		}
		out[strings.ToLower(strings.TrimSuffix(f[0], ":"))] = cs
	}
	return out
}

// actionCounts is Actions as a map.
func actionCounts(t *testing.T) map[string]uint64 {
	t.Helper()
	as, err := Actions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, a := range as {
		out[a.Name] = a.Count
	}
	return out
}

func sum(cs []uint64) uint64 {
	var n uint64
	for _, c := range cs {
		n += c
	}
	return n
}

// near reports whether a tracer's count n is the kernel's count want, give
// or take the events of the moments between the kernel's counters being
// read and the tracer being reset or read.
func near(n, want uint64) bool {
	slack := want/50 + 20
	return n+slack >= want && n <= want+slack
}

// The tracer counts what the kernel counts: each vector's runs as
// /proc/softirqs does, each irq action's handler runs as /proc/interrupts
// does, while a TCP loopback ping-pong (net_rx) and fsyncs (the disk's
// irq, block) run; and the metrics it declares are the ones it reads.
func TestCountsWhatTheKernelCounts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	vectors := []string{"net_rx", "timer", "block", "sched", "rcu"}
	irqs, _, err := Discover(HardSlots(vectors))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Irqs: irqs, Vectors: vectors, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Fatalf("variant %s, want %s", got, v)
			}
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			soft0, hard0 := softirqCounts(t), actionCounts(t)
			const rounds = 3000
			tcpPingPong(t, rounds, -1)
			fsyncs(t, dir, 50)
			time.Sleep(50 * time.Millisecond) // some ticks: timer, sched, rcu
			soft1, hard1 := softirqCounts(t), actionCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			missed, err := tr.Missed()
			if err != nil {
				t.Fatal(err)
			}
			if missed != 0 {
				t.Errorf("missed %d events", missed)
			}

			var read []string
			for m := range hs {
				read = append(read, m)
			}
			sort.Strings(read)
			declared := slices.Clone(tr.Metrics())
			sort.Strings(declared)
			if diff := cmp.Diff(declared, read); diff != "" {
				t.Errorf("metrics read are not those declared (-declared +read):\n%s", diff)
			}
			if diff := cmp.Diff(Metrics(irqs, vectors), tr.Metrics()); diff != "" {
				t.Errorf("tracer's metrics (-Metrics +tracer):\n%s", diff)
			}

			for _, vec := range vectors {
				want := sum(soft1[vec]) - sum(soft0[vec])
				runs := hs[DurationMetric(vec)]
				raises := hs[LatencyMetric(vec)]
				t.Logf("%s: %d runs (kernel: %d), %d raise-to-run latencies; p50 duration %.0f ns, p50 latency %.0f ns",
					vec, runs.Count(), want, raises.Count(), runs.Quantile(0.5), raises.Quantile(0.5))
				if !near(runs.Count(), want) {
					t.Errorf("%s counted %d runs, the kernel %d", DurationMetric(vec), runs.Count(), want)
				}
				// Every run follows a raise the tracer saw but those
				// raised before it was attached; raises coalesce.
				if n := raises.Count(); n > runs.Count()+20 || (want > 100 && n < want/2) {
					t.Errorf("%s counted %d raise-to-run latencies for %d runs", LatencyMetric(vec), n, runs.Count())
				}
				if p := runs.Quantile(0.99); runs.Count() > 0 && (p <= 0 || p > float64(100*time.Millisecond)) {
					t.Errorf("%s p99 %.0f ns is not a softirq's run time", DurationMetric(vec), p)
				}
			}
			if n := hs[DurationMetric("net_rx")].Count(); n < rounds {
				t.Errorf("%d net_rx runs for %d round trips on TCP loopback", n, rounds)
			}
			if n := hs[DurationMetric("block")].Count(); n == 0 {
				t.Errorf("no block softirq runs for 50 fsyncs")
			}

			var hard uint64
			for _, name := range irqs {
				n, want := hs[HardMetric(name)].Count(), hard1[name]-hard0[name]
				hard += n
				if want > 0 || n > 0 {
					t.Logf("irq %s: %d handler runs (kernel: %d), p50 %.0f ns", name, n, want, hs[HardMetric(name)].Quantile(0.5))
				}
				if !near(n, want) {
					t.Errorf("%s counted %d handler runs, /proc/interrupts %d", HardMetric(name), n, want)
				}
			}
			if hard == 0 {
				t.Errorf("no hardirq of %v counted during 50 fsyncs", irqs)
			}
		})
	}
}

// With CPUs, only those CPUs count: the kernel's per-CPU counts of
// /proc/softirqs are the truth, while the ping-pong runs on the CPU left
// out.
func TestCountsOnlyItsCPUs(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Vectors: []string{"net_rx", "timer", "sched", "rcu"}, CPUs: []int{0}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			soft0 := softirqCounts(t)
			tcpPingPong(t, 3000, 1)
			soft1 := softirqCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			for _, vec := range []string{"net_rx", "timer", "sched", "rcu"} {
				cpu0 := soft1[vec][0] - soft0[vec][0]
				cpu1 := soft1[vec][1] - soft0[vec][1]
				n := hs[DurationMetric(vec)].Count()
				t.Logf("%s: %d runs, kernel: %d on CPU 0, %d on CPU 1", vec, n, cpu0, cpu1)
				if !near(n, cpu0) {
					t.Errorf("%s counted %d runs, the kernel %d on CPU 0 (and %d on CPU 1, not counted)", DurationMetric(vec), n, cpu0, cpu1)
				}
			}
			if cpu1 := soft1["net_rx"][1] - soft0["net_rx"][1]; cpu1 < 3000 {
				t.Errorf("the kernel ran net_rx %d times on CPU 1 for a ping-pong of 3000 round trips there", cpu1)
			}
		})
	}
}

// The slowest interrupts are caught with the task they interrupted and a
// kernel stack that is the interrupt's.
func TestEvidenceOfInterrupts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	irqs, _, err := Discover(HardSlots(DefaultVectors))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const k = 5
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Irqs: irqs, Vectors: DefaultVectors, Variant: v, Evidence: k})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			tcpPingPong(t, 2000, -1)
			fsyncs(t, dir, 20)
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			sym := tracing.NewSymbolizer()
			// Frames of the kernel's interrupt paths (handle_softirqs was
			// __do_softirq before 6.8).
			softirq := []string{"handle_softirqs", "__do_softirq"}
			hardirq := []string{"__handle_irq_event_percpu", "handle_irq_event"}
			check := func(metric string, want []string) {
				got := evs[metric]
				if len(got) == 0 {
					t.Errorf("no evidence of %s (dropped %d)", metric, dropped)
					return
				}
				for i, e := range got {
					if e.Metric != metric {
						t.Errorf("event of %s under %s", e.Metric, metric)
					}
					if i > 0 && e.Latency > got[i-1].Latency {
						t.Errorf("%s: events not slowest first", metric)
					}
					if e.Comm == "" {
						t.Errorf("%s: event without the interrupted task", metric)
					}
					frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
					if !slices.ContainsFunc(want, func(f string) bool { return strings.Contains(frames, f) }) {
						t.Errorf("%s: kernel stack without any of %v: %s", metric, want, frames)
					}
				}
				e := got[0]
				t.Logf("%s: slowest %d ns on CPU %d, interrupting %s (%d/%d)", metric, e.Latency, e.CPU, e.Comm, e.PID, e.TID)
			}
			check(DurationMetric("net_rx"), softirq)
			check(LatencyMetric("net_rx"), softirq)
			var hard []string
			for _, name := range irqs {
				if len(evs[HardMetric(name)]) > 0 {
					hard = append(hard, name)
				}
			}
			if len(hard) == 0 {
				t.Errorf("no evidence of any hardirq of %v", irqs)
			}
			for _, name := range hard {
				check(HardMetric(name), hardirq)
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		err  string
	}{
		{"nothing", Options{}, "irq tracer: no irqs and no vectors"},
		{"cpu", Options{Vectors: []string{"rcu"}, CPUs: []int{1024}}, "irq tracer: CPU 1024 out of range 0-1023"},
		{"vector", Options{Vectors: []string{"net"}}, `irq tracer: unknown softirq vector "net"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.opts)
			if err == nil {
				tr.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q, want %q", err, tt.err)
			}
		})
	}
}
