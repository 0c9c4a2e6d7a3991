package offcpu

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/symbols"
)

var variants = []tracing.Variant{tracing.TPBTF, tracing.RawTP}

// nanosleeps sleeps n times for d in clock_nanosleep, on the calling thread.
func nanosleeps(t *testing.T, n int, d time.Duration) {
	t.Helper()
	// A signal pending as the thread goes to sleep (the Go runtime's
	// SIGURG) switches it out runnable: the sleeps block signals.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &all, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	for range n {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		for {
			err := unix.Nanosleep(&ts, &ts)
			if err == nil {
				break
			}
			if err != unix.EINTR {
				t.Fatal(err)
			}
		}
	}
}

// switches is the kernel's count of a thread's context switches from
// /proc/self/task/TID/status: voluntary (it blocked) and not (it was
// preempted or yielded).
func switches(t *testing.T, tid int) (voluntary, involuntary uint64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		for key, p := range map[string]*uint64{"voluntary_ctxt_switches:": &voluntary, "nonvoluntary_ctxt_switches:": &involuntary} {
			if v, ok := strings.CutPrefix(line, key); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				*p = n
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("/proc/self/task/%d/status has no context switch counts", tid)
	}
	return voluntary, involuntary
}

// pin binds the calling (locked) thread to cpu and returns what undoes it.
func pin(t *testing.T, cpu int) func() {
	t.Helper()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	return func() { unix.SchedSetaffinity(0, &old) }
}

// A thread that sleeps n times for 2 ms is off the CPU, blocked, at least n
// times, for about 2 ms each; a sibling thread, not registered, sleeping as
// often is not counted; and the metrics the tracer declares are those it
// reads.
func TestSleepsAreBlocked(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	const n, d = 200, 2 * time.Millisecond
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			if got := tr.Variant(); got != v {
				t.Fatalf("variant %s, want %s", got, v)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			if err := tr.AddThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			sibling := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				nanosleeps(t, n, d)
				close(sibling)
			}()
			nanosleeps(t, n, d)
			if err := tr.RemoveThread(unix.Gettid()); err != nil {
				t.Fatal(err)
			}
			<-sibling
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
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
			if diff := cmp.Diff(Metrics, tr.Metrics()); diff != "" {
				t.Errorf("tracer's metrics (-Metrics +tracer):\n%s", diff)
			}

			b := hs["offcpu.blocked"]
			p50 := time.Duration(b.Quantile(0.5))
			t.Logf("offcpu.blocked: %d events, p50 %v, p99 %v; offcpu.runnable: %d", b.Count(), p50, time.Duration(b.Quantile(0.99)), hs["offcpu.runnable"].Count())
			// About one run in a hundred loses one of the 200 switches
			// (seen on CI: 199, the same rare single loss as the sched and
			// offcpu context-switch tests allow; the cause is not found),
			// so one is allowed.
			if b.Count() < n-1 {
				t.Errorf("offcpu.blocked counted %d, want at least %d of the %d sleeps (one loss allowed)", b.Count(), n-1, n)
			}
			// The sibling's sleeps, had they been counted, would double it.
			if b.Count() > n+n/2 {
				t.Errorf("offcpu.blocked counted %d for %d sleeps of the registered thread: the unregistered sibling's %d are counted", b.Count(), n, n)
			}
			if p50 < d*95/100 || p50 > 2*d {
				t.Errorf("offcpu.blocked p50 %v for sleeps of %v", p50, d)
			}
		})
	}
}

// The kernel's own context-switch counts are the truth: each voluntary one
// is a blocked event, each involuntary one (preempted by a hog on the same
// CPU) a runnable one.
func TestCountsWhatTheKernelCounts(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	hogReady := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pin(t, 0)
		close(hogReady)
		for !stop.Load() {
		}
	}()
	defer stop.Store(true)
	<-hogReady
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer pin(t, 0)()
			tid := unix.Gettid()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			// The kernel's counts read before and after each of adding
			// and removing the thread bound what the tracer may count:
			// at least what happened between the inner readings, at most
			// what happened between the outer ones.
			// A signal pending when the thread reaches the scheduler to
			// sleep switches it out runnable while the kernel counts a
			// voluntary switch; the Go runtime's preemption signals
			// (SIGURG) to the spinning thread did that to two of 150
			// switches in one run. Blocked signals set no pending flag,
			// so the thread blocks them all while it is measured.
			var all, old unix.Sigset_t
			for i := range all.Val {
				all.Val[i] = ^uint64(0)
			}
			if err := unix.PthreadSigmask(unix.SIG_BLOCK, &all, &old); err != nil {
				t.Fatal(err)
			}
			vol0, invol0 := switches(t, tid)
			if err := tr.AddThread(tid); err != nil {
				t.Fatal(err)
			}
			vol1, invol1 := switches(t, tid)
			// Spin beside the hog: preempted at each of its slices.
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
			}
			nanosleeps(t, 100, 100*time.Microsecond)
			vol2, invol2 := switches(t, tid)
			if err := tr.RemoveThread(tid); err != nil {
				t.Fatal(err)
			}
			vol3, invol3 := switches(t, tid)
			if err := unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil); err != nil {
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
			blocked, runnable := hs["offcpu.blocked"].Count(), hs["offcpu.runnable"].Count()
			t.Logf("blocked %d (kernel: %d-%d voluntary switches), runnable %d (kernel: %d-%d involuntary), missed %d; runnable p50 %v",
				blocked, vol2-vol1, vol3-vol0, runnable, invol2-invol1, invol3-invol0, missed, time.Duration(hs["offcpu.runnable"].Quantile(0.5)))
			// With signals blocked no switch moves from blocked to
			// runnable (200 runs, 2026-12-02); the margin of one stays for
			// a signal the kernel itself raises. Apart from that, about one
			// run in twenty loses one switch outright, though no program
			// run was skipped and no task storage was busy (cause not
			// found): one such loss is allowed.
			total, kLo, kHi := blocked+runnable+missed, vol2-vol1+invol2-invol1, vol3-vol0+invol3-invol0
			if total+1 < kLo || total > kHi {
				t.Errorf("offcpu counted %d switches (blocked %d, runnable %d, missed %d), the kernel %d-%d", total, blocked, runnable, missed, kLo, kHi)
			}
			if blocked+missed+2 < vol2-vol1 || blocked > vol3-vol0 {
				t.Errorf("offcpu.blocked counted %d (missed %d), the kernel %d-%d voluntary switches (one may be runnable, one lost)", blocked, missed, vol2-vol1, vol3-vol0)
			}
			if runnable+missed+2 < invol2-invol1 || runnable > invol3-invol0+1 {
				t.Errorf("offcpu.runnable counted %d (missed %d), the kernel %d-%d involuntary switches (one voluntary may be runnable)", runnable, missed, invol2-invol1, invol3-invol0)
			}
			invol := invol2 - invol1
			if invol < 10 {
				t.Errorf("only %d involuntary switches spinning beside a hog for 300 ms", invol)
			}
		})
	}
}

// The slowest off-CPU events of a sleeping thread carry the stack it left
// the CPU with: in clock_nanosleep.
func TestEvidenceStackIsWhereItSlept(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	const k = 10
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: k}, Variant: v})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid := unix.Gettid()
			if err := tr.Reset(); err != nil {
				t.Fatal(err)
			}
			if err := tr.AddThread(tid); err != nil {
				t.Fatal(err)
			}
			nanosleeps(t, 50, 2*time.Millisecond)
			if err := tr.RemoveThread(tid); err != nil {
				t.Fatal(err)
			}
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			got := evs["offcpu.blocked"]
			if len(got) != k {
				t.Fatalf("%d offcpu.blocked events, want %d (dropped %d)", len(got), k, dropped)
			}
			sym := symbols.NewSymbolizer()
			for i, e := range got {
				frames := sym.Frames(e.KernelStack, false, 0)
				if i == 0 {
					t.Logf("slowest: %v, %s (%d/%d) on CPU %d after %s; stack %s", time.Duration(e.Latency), e.Comm, e.PID, e.TID, e.CPU, e.OtherComm, strings.Join(frames, " "))
				}
				if e.TID != uint32(tid) || e.PID != uint32(os.Getpid()) {
					t.Errorf("event of %d/%d (%s), want the registered thread %d/%d", e.PID, e.TID, e.Comm, os.Getpid(), tid)
				}
				if e.Latency < uint64(time.Millisecond) {
					t.Errorf("one of the slowest off-CPU events of 2 ms sleeps took %v", time.Duration(e.Latency))
				}
				if !slices.ContainsFunc(frames, func(f string) bool {
					return strings.HasPrefix(f, "do_nanosleep+") || strings.HasPrefix(f, "hrtimer_nanosleep+")
				}) {
					t.Errorf("stack of a %v sleep names no nanosleep frame: %s", time.Duration(e.Latency), strings.Join(frames, " "))
				}
			}
		})
	}
}

// A process not traced is not counted.
func TestTracerIgnoresOtherProcesses(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			// A tgid that does not exist.
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1 << 30}, Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			nanosleeps(t, 50, time.Millisecond)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range Metrics {
				if n := hs[m].Count(); n != 0 {
					t.Errorf("%s counted %d events of untraced processes", m, n)
				}
			}
		})
	}
}
