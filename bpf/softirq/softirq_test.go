package softirq

import (
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/internal/testenv"
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
		defer pin(cpu)()
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

// diskDir returns a directory on a block device, for fsyncs that reach a
// disk: the test's temporary directory, or one beside the package's
// sources when that is in memory (tmpfs).
func diskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != unix.TMPFS_MAGIC && st.Type != unix.RAMFS_MAGIC {
		return dir
	}
	dir, err := os.MkdirTemp(".", ".fsync-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// fsyncs writes and fsyncs a file in dir n times: block I/O, completed in
// block softirqs.
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
	for _, v := range Vectors {
		if out[v] == nil {
			t.Fatalf("/proc/softirqs has no %s", strings.ToUpper(v))
		}
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

// within reports whether a tracer's count n lies between lo and hi, the
// kernel's counts of the shortest and longest windows the tracer's could
// have been (read before and after each end), give or take 20 runs that
// were on a CPU while it was read.
func within(n, lo, hi uint64) bool {
	return n+20 >= lo && n <= hi+20
}

// The tracer counts each vector's runs as /proc/softirqs does, while a TCP
// loopback ping-pong (net_rx), fsyncs (block) and the ticks of a sleep
// (timer, sched, rcu) run; every run has the latency of its raise; and the
// metrics it declares are the ones it reads.
func TestCountsWhatTheKernelCounts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	// The limit is 8 vectors: leave out hi and irq_poll, which few drivers
	// use.
	vectors := []string{"net_rx", "net_tx", "block", "timer", "hrtimer", "sched", "rcu", "tasklet"}
	dir := diskDir(t)
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Vectors: vectors, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Fatalf("variant %s, want %s", got, v)
			}
			// The kernel's counters are read before and after the
			// tracer's Reset and Read: on a busy machine (a neighbour's
			// synchronous writes raise thousands of block softirqs a
			// second) a few ms between the two reads hold dozens of runs.
			preReset := softirqCounts(t)
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			postReset := softirqCounts(t)
			const rounds = 3000
			tcpPingPong(t, rounds, -1)
			fsyncs(t, dir, 50)
			time.Sleep(50 * time.Millisecond)
			preRead := softirqCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			postRead := softirqCounts(t)
			missed, err := tr.Missed()
			if err != nil {
				t.Fatal(err)
			}
			if missed != 0 {
				t.Errorf("missed %d events", missed)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(tr.Metrics())), slices.Sorted(maps.Keys(hs))); diff != "" {
				t.Errorf("metrics read are not those declared (-declared +read):\n%s", diff)
			}
			if diff := cmp.Diff(Metrics(vectors), tr.Metrics()); diff != "" {
				t.Errorf("tracer's metrics (-Metrics +tracer):\n%s", diff)
			}
			for _, vec := range vectors {
				lo := sum(preRead[vec]) - sum(postReset[vec])
				hi := sum(postRead[vec]) - sum(preReset[vec])
				runs, raises := hs[DurationMetric(vec)], hs[LatencyMetric(vec)]
				t.Logf("%s: %d runs (kernel: %d-%d), %d raises; duration p50 %.0f ns p99 %.0f ns, latency p50 %.0f ns p99 %.0f ns",
					vec, runs.Count(), lo, hi, raises.Count(), runs.Quantile(0.5), runs.Quantile(0.99), raises.Quantile(0.5), raises.Quantile(0.99))
				if !within(runs.Count(), lo, hi) {
					t.Errorf("%s counted %d runs, the kernel %d-%d", DurationMetric(vec), runs.Count(), lo, hi)
				}
				// Every run has a raise the tracer saw, but those raised
				// before Reset, and those of the runs while Reset and Read
				// went through the maps (at most hi-lo).
				if n, slack := raises.Count(), 20+hi-lo; n > runs.Count()+slack || n+slack < runs.Count() {
					t.Errorf("%s counted %d raise-to-run latencies for %d runs (kernel %d-%d)", LatencyMetric(vec), n, runs.Count(), lo, hi)
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
			if n := hs[DurationMetric("timer")].Count() + hs[DurationMetric("sched")].Count() + hs[DurationMetric("rcu")].Count(); n == 0 {
				t.Errorf("no timer, sched or rcu softirq in %v of ticks", 50*time.Millisecond)
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
	testenv.Need(t, testenv.CPUs(2))
	vectors := []string{"net_rx", "timer", "sched", "rcu"}
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Vectors: vectors, CPUs: []int{0}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			// Bracketed as in TestCountsWhatTheKernelCounts.
			preReset := softirqCounts(t)
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			postReset := softirqCounts(t)
			tcpPingPong(t, 3000, 1)
			time.Sleep(50 * time.Millisecond)
			preRead := softirqCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			postRead := softirqCounts(t)
			for _, vec := range vectors {
				lo, hi := preRead[vec][0]-postReset[vec][0], postRead[vec][0]-preReset[vec][0]
				cpu1 := preRead[vec][1] - postReset[vec][1]
				n := hs[DurationMetric(vec)].Count()
				t.Logf("%s: %d runs, kernel: %d-%d on CPU 0, %d on CPU 1", vec, n, lo, hi, cpu1)
				if !within(n, lo, hi) {
					t.Errorf("%s counted %d runs, the kernel %d-%d on CPU 0 (and %d on CPU 1, not counted)", DurationMetric(vec), n, lo, hi, cpu1)
				}
			}
			if cpu1 := preRead["net_rx"][1] - postReset["net_rx"][1]; cpu1 < 3000 {
				t.Errorf("the kernel ran net_rx %d times on CPU 1 for a ping-pong of 3000 round trips there", cpu1)
			}
		})
	}
}

// The slowest softirqs are caught with the task they interrupted and a
// kernel stack in the kernel's softirq loop.
func TestEvidenceOfSoftirqs(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	const k = 5
	// handle_softirqs was __do_softirq before Linux 6.8.
	loop := []string{"handle_softirqs", "__do_softirq"}
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{Evidence: k}, Vectors: DefaultVectors, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			tcpPingPong(t, 2000, -1)
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			sym := symbols.NewSymbolizer()
			ours := 0
			for _, metric := range []string{DurationMetric("net_rx"), LatencyMetric("net_rx")} {
				got := evs[metric]
				if len(got) != k {
					t.Errorf("%d events of %s, want %d (dropped %d)", len(got), metric, k, dropped)
					continue
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
					if e.PID == uint32(os.Getpid()) {
						ours++
					}
					frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " ")
					if !slices.ContainsFunc(loop, func(f string) bool { return strings.Contains(frames, f) }) {
						t.Errorf("%s: kernel stack without any of %v: %s", metric, loop, frames)
					}
				}
				e := got[0]
				t.Logf("%s: slowest %d ns on CPU %d, interrupting %s (%d/%d)", metric, e.Latency, e.CPU, e.Comm, e.PID, e.TID)
			}
			// Loopback packets are received in the sender's softirq, at
			// the end of its transmit: most slow ones are this process's.
			if ours == 0 {
				t.Errorf("none of the slowest net_rx softirqs ran in this process, which sent thousands over loopback")
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		vectors []string
		err     string
	}{
		{"defaults", DefaultVectors, ""},
		{"eight", Vectors[:8], ""},
		{"nine", Vectors[:9], "9 vectors are 18 metrics (two per vector), at most 16: name at most 8 vectors"},
		{"nothing", nil, "no vectors to count"},
		{"unknown", []string{"NET_RX"}, `unknown softirq vector "NET_RX"; vectors: hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu`},
		{"twice", []string{"rcu", "rcu"}, `vector "rcu" listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.vectors)
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	got := Metrics([]string{"net_rx", "timer"})
	want := []string{"softirq.net_rx.latency", "softirq.net_rx.duration", "softirq.timer.latency", "softirq.timer.duration"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(Vectors) != nVectors {
		t.Errorf("%d vectors named, the programs have %d", len(Vectors), nVectors)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		err  string
	}{
		{"nothing", Options{}, "softirq tracer: no vectors to count"},
		{"cpu", Options{Vectors: []string{"rcu"}, CPUs: []int{-1}}, "softirq tracer: CPU -1 out of range 0-1023"},
		{"vector", Options{Vectors: []string{"net"}}, `softirq tracer: unknown softirq vector "net"`},
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
