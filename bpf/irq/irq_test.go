package irq

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// fsyncs writes and fsyncs a file in dir n times: block I/O, whose
// completions are the disk's hardirqs.
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

// actionCounts is what the kernel counted of each action so far, per CPU
// (in /proc/interrupts' columns, the online CPUs in order).
func actionCounts(t *testing.T) map[string][]uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		t.Fatal(err)
	}
	irqs, err := ParseInterrupts(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint64{}
	for _, in := range irqs {
		for _, name := range irqNames("/proc", in.IRQ) {
			cs := out[name]
			if cs == nil {
				cs = make([]uint64, len(in.PerCPU))
				out[name] = cs
			}
			for i, c := range in.PerCPU {
				cs[i] += c
			}
		}
	}
	return out
}

// delta returns what the kernel counted of name between two readings, on
// the CPUs for which on reports true.
func delta(before, after map[string][]uint64, name string, on func(cpu int) bool) uint64 {
	var n uint64
	for cpu := range after[name] {
		if on(cpu) {
			n += after[name][cpu]
			if cpu < len(before[name]) {
				n -= before[name][cpu]
			}
		}
	}
	return n
}

func everyCPU(int) bool { return true }

// within reports whether a tracer's count n is the kernel's: at least lo,
// what the kernel counted between readings taken after the tracer's reset
// and before its read, and at most hi, between readings taken before the
// reset and after the read (a disk busy with another's writeback
// interrupts in those moments too); give or take a few, since the
// kernel's per-CPU counters are not read at one instant.
func within(n, lo, hi uint64) bool {
	slack := lo/50 + 10
	return n+slack >= lo && n <= hi+slack
}

// The tracer counts each action's handler runs as /proc/interrupts does,
// while fsyncs make the disk interrupt; and the metrics it declares are the
// ones it reads.
func TestCountsWhatTheKernelCounts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	irqs, left, err := Discover(MaxMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if len(irqs) == 0 {
		t.Fatal("no irq actions on this machine")
	}
	t.Logf("counting %v; left out %v", irqs, left)
	dir := diskDir(t)
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Irqs: irqs, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Fatalf("variant %s, want %s", got, v)
			}
			outerBefore := actionCounts(t)
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			before := actionCounts(t)
			fsyncs(t, dir, 100)
			time.Sleep(50 * time.Millisecond)
			after := actionCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			outerAfter := actionCounts(t)
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
			if diff := cmp.Diff(Metrics(irqs), tr.Metrics()); diff != "" {
				t.Errorf("tracer's metrics (-Metrics +tracer):\n%s", diff)
			}
			var total uint64
			for _, name := range irqs {
				h := hs[Metric(name)]
				n, want, most := h.Count(), delta(before, after, name, everyCPU), delta(outerBefore, outerAfter, name, everyCPU)
				total += n
				if n > 0 || want > 0 {
					t.Logf("%s: %d handler runs (kernel: %d, %d with the moments around), p50 %.0f ns, p99 %.0f ns", name, n, want, most, h.Quantile(0.5), h.Quantile(0.99))
				}
				if !within(n, want, most) {
					t.Errorf("%s counted %d handler runs, /proc/interrupts %d (%d with the moments around)", Metric(name), n, want, most)
				}
				if p := h.Quantile(0.99); n > 0 && (p <= 0 || p > float64(10*time.Millisecond)) {
					t.Errorf("%s p99 %.0f ns is not a hardirq handler's run time", Metric(name), p)
				}
			}
			if total == 0 {
				t.Errorf("no hardirq of %v counted during 100 fsyncs", irqs)
			}
		})
	}
}

// With CPUs, only those CPUs count: the per-CPU counts of /proc/interrupts
// are the truth, while the CPU the disk interrupts most is left out.
func TestCountsOnlyItsCPUs(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	testenv.Need(t, testenv.CPUs(2))
	irqs, _, err := Discover(MaxMetrics)
	if err != nil {
		t.Fatal(err)
	}
	dir := diskDir(t)
	// Where do the disk's interrupts land?
	before := actionCounts(t)
	fsyncs(t, dir, 20)
	after := actionCounts(t)
	busiest, most := 0, uint64(0)
	for cpu := range runtime.NumCPU() {
		var n uint64
		for _, name := range irqs {
			n += delta(before, after, name, func(c int) bool { return c == cpu })
		}
		if n > most {
			busiest, most = cpu, n
		}
	}
	var cpus []int
	for cpu := range runtime.NumCPU() {
		if cpu != busiest {
			cpus = append(cpus, cpu)
		}
	}
	counted := func(cpu int) bool { return slices.Contains(cpus, cpu) }
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{Irqs: irqs, CPUs: cpus, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			outerBefore := actionCounts(t)
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			before := actionCounts(t)
			fsyncs(t, dir, 50)
			after := actionCounts(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			outerAfter := actionCounts(t)
			var excluded uint64
			for _, name := range irqs {
				n := hs[Metric(name)].Count()
				want := delta(before, after, name, counted)
				out := delta(before, after, name, func(c int) bool { return !counted(c) })
				excluded += out
				if n > 0 || want > 0 || out > 0 {
					t.Logf("%s: %d handler runs, kernel: %d on CPUs %v, %d on CPU %d", name, n, want, cpus, out, busiest)
				}
				if most := delta(outerBefore, outerAfter, name, counted); !within(n, want, most) {
					t.Errorf("%s counted %d handler runs, the kernel %d on CPUs %v (%d with the moments around; and %d on CPU %d, not counted)", Metric(name), n, want, cpus, most, out, busiest)
				}
			}
			if excluded == 0 {
				t.Errorf("no interrupt on CPU %d, the one left out, during 50 fsyncs: the test shows nothing", busiest)
			}
		})
	}
}

// The slowest handler runs are caught with the task they interrupted and
// a kernel stack that is the interrupt's.
func TestEvidenceOfInterrupts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	irqs, _, err := Discover(MaxMetrics)
	if err != nil {
		t.Fatal(err)
	}
	dir := diskDir(t)
	const k = 5
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{Evidence: k}, Irqs: irqs, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			fsyncs(t, dir, 20)
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			sym := symbols.NewSymbolizer()
			seen := 0
			for _, name := range irqs {
				metric := Metric(name)
				got := evs[metric]
				if len(got) == 0 {
					continue
				}
				seen++
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
					if !strings.Contains(frames, "handle_irq_event") {
						t.Errorf("%s: kernel stack without handle_irq_event: %s", metric, frames)
					}
				}
				e := got[0]
				t.Logf("%s: slowest %d ns on CPU %d, interrupting %s (%d/%d)", metric, e.Latency, e.CPU, e.Comm, e.PID, e.TID)
			}
			if seen == 0 {
				t.Errorf("no evidence of any hardirq of %v during 20 fsyncs (dropped %d)", irqs, dropped)
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
		{"nothing", Options{}, "irq tracer: no irqs to count"},
		{"cpu", Options{Irqs: []string{"timer"}, CPUs: []int{1024}}, "irq tracer: CPU 1024 out of range 0-1023"},
		{"long name", Options{Irqs: []string{strings.Repeat("n", 40)}}, "irq tracer: irq name"},
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
