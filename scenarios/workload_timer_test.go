//go:build linux && amd64

package scenarios

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// ref returns a pointer to v, for the timer's optional fields.
func ref[T any](v T) *T { return &v }

// readDMALatency reads the idle-state bound the kernel holds now, in µs.
func readDMALatency(t *testing.T) int32 {
	t.Helper()
	testenv.Need(t, testenv.PMQoS)
	b, err := os.ReadFile(dmaLatencyPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4 {
		t.Fatalf("%s reads %d bytes, want 4", dmaLatencyPath, len(b))
	}
	return int32(binary.NativeEndian.Uint32(b))
}

// openDMALatencyFds counts this process's descriptors open on
// /dev/cpu_dma_latency.
func openDMALatencyFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == dmaLatencyPath {
			n++
		}
	}
	return n
}

// lockedKiB reads VmLck from /proc/self/status.
func lockedKiB(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmLck:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no VmLck in /proc/self/status")
	return ""
}

// TestTimerHolds runs the timer with its cyclictest settings and checks
// that they hold while the workload is open and are let go at Close.
// Other processes on the machine (a cyclictest) may hold the bound too, and
// the kernel keeps the least of all: while open it is at most the
// workload's, and Close leaves no descriptor of ours.
func TestTimerHolds(t *testing.T) {
	readDMALatency(t)
	tests := []struct {
		name   string
		w      Workload
		during int32 // the bound while the workload is open, at most; -1 for not held
		locked bool
	}{
		{"defaults", Workload{Kind: "timer", Params: &Timer{Priority: 10}}, 0, true},
		{"dma_latency 7", Workload{Kind: "timer", Params: &Timer{MLock: ref(false), DMALatency: ref(7)}}, 7, false},
		{"left alone", Workload{Kind: "timer", Params: &Timer{MLock: ref(false), DMALatency: ref(DMALatencyLeave)}}, -1, false},
		{"runtime sleep", Workload{Kind: "timer", Params: &Timer{Sleep: TimerSleepRuntime}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if n := openDMALatencyFds(t); n != 1 && tt.during >= 0 || n != 0 && tt.during < 0 {
				t.Errorf("%d descriptors on %s while open, want held %v", n, dmaLatencyPath, tt.during >= 0)
			}
			if got := readDMALatency(t); tt.during >= 0 && got > tt.during {
				t.Errorf("%s while open = %d, want at most %d", dmaLatencyPath, got, tt.during)
			}
			if got := lockedKiB(t); (got != "0 kB") != tt.locked {
				t.Errorf("VmLck while open = %s, want locked %v", got, tt.locked)
			}
			st := runFor(t, r, 50*time.Millisecond)
			if st.Ops == 0 || st.Metrics[MetricTimerLateness].Count() != st.Ops {
				t.Errorf("stats %+v", st)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if n := openDMALatencyFds(t); n != 0 {
				t.Errorf("%d descriptors on %s after Close", n, dmaLatencyPath)
			}
			if got := lockedKiB(t); got != "0 kB" {
				t.Errorf("VmLck after Close = %s, want 0 kB", got)
			}
		})
	}
}

// TestTimerParams: the digest of a timer scenario counts the defaults as
// written out, and tells mlock, dma_latency and sleep apart; the
// scenario's JSON records them.
func TestTimerParams(t *testing.T) {
	def := &Scenario{Workload: Workload{Kind: "timer"}, Duration: time.Second}
	explicit := &Scenario{Workload: Workload{Kind: "timer", Params: &Timer{MLock: ref(true), DMALatency: ref(0), Sleep: TimerSleepRaw}}, Duration: time.Second}
	if Params(def) != Params(explicit) {
		t.Error("defaults hash differently from the same values written out")
	}
	parsed, err := Parse("t.yaml", []byte("name: t\nworkload: {kind: timer, sleep: raw}\nduration: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if Params(parsed) != Params(def) {
		t.Error("sleep: raw in YAML hashes differently from no sleep key")
	}
	for _, w := range []Workload{
		{Kind: "timer", Params: &Timer{MLock: ref(false)}},
		{Kind: "timer", Params: &Timer{DMALatency: ref(DMALatencyLeave)}},
		{Kind: "timer", Params: &Timer{Sleep: TimerSleepRuntime}},
	} {
		if Params(&Scenario{Workload: w, Duration: time.Second}) == Params(def) {
			t.Errorf("%+v hashes as the defaults", w)
		}
	}
	w := Workload{Kind: "timer"}.withDefaults()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"timer","threads":1,"interval":1000000,"mlock":true,"dma_latency":0,"sleep":"raw"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if b, err := json.Marshal(Workload{Kind: "timer", Params: &Timer{Sleep: TimerSleepRuntime}}.withDefaults()); err != nil || !strings.HasSuffix(string(b), `"dma_latency":0,"sleep":"runtime"}`) {
		t.Errorf("JSON of sleep runtime %s, %v", b, err)
	}
}

// TestTimerRawSleep: a raw sleep keeps its P, yet it holds up no stop of
// the world. runtime.GC runs in a loop beside a raw timer of 50 ms: each
// GC stops the world twice and scans the timer's stack, and each time the
// runtime's signal ends the sleep with EINTR, the thread yields and sleeps
// again to the same deadline. Were the GCs waiting for the wakeups, fewer
// than one would finish per interval and they would take 25 ms on average;
// an EINTR counted as a wakeup would make ops far more than the deadlines.
func TestTimerRawSleep(t *testing.T) {
	testenv.Need(t, testenv.Root) // SCHED_FIFO
	const interval = 50 * time.Millisecond
	r, err := NewWorkload(Workload{Kind: "timer", Params: &Timer{Interval: interval, Priority: 10, Sleep: TimerSleepRaw}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := make(chan struct{})
	gcs := make(chan []time.Duration)
	go func() {
		var ds []time.Duration
		for {
			select {
			case <-stop:
				gcs <- ds
				return
			default:
			}
			t0 := time.Now()
			runtime.GC()
			ds = append(ds, time.Since(t0))
		}
	}()
	start := time.Now()
	st := runFor(t, r, time.Second)
	elapsed := time.Since(start)
	close(stop)
	ds := <-gcs
	slices.Sort(ds)

	// A stall of the machine may skip deadlines; nothing may add any.
	deadlines := uint64(elapsed / interval)
	if st.Ops < deadlines/2 || st.Ops > deadlines {
		t.Errorf("%d wakeups in %v at %v, want %d (or up to half fewer)", st.Ops, elapsed, interval, deadlines)
	}
	if n := st.Metrics[MetricTimerLateness].Count(); n != st.Ops {
		t.Errorf("%d lateness readings, %d wakeups", n, st.Ops)
	}
	// Every sleep but the wakeups and the one the stop ended was ended by
	// the runtime.
	if intr := st.Syscalls["clock_nanosleep"] - st.Ops; intr <= deadlines {
		t.Errorf("%d clock_nanosleep calls for %d wakeups: the GCs did not interrupt the sleep", st.Syscalls["clock_nanosleep"], st.Ops)
	}
	if len(ds) < 3*int(deadlines) {
		t.Fatalf("%d GCs in %v beside a raw sleep of %v, want at least %d", len(ds), elapsed, interval, 3*deadlines)
	}
	if p50, p90 := ds[len(ds)/2], ds[len(ds)*9/10]; p50 > 5*time.Millisecond || p90 > interval/5 {
		t.Errorf("runtime.GC beside a raw sleep of %v: p50 %v, p90 %v, max %v; want p50 under 5ms, p90 under %v", interval, p50, p90, ds[len(ds)-1], interval/5)
	}
	t.Logf("%d GCs: p50 %v, p90 %v, max %v; %d wakeups, %d clock_nanosleep calls", len(ds), ds[len(ds)/2], ds[len(ds)*9/10], ds[len(ds)-1], st.Ops, st.Syscalls["clock_nanosleep"])
}

// TestTimerRawSleepPreempted: with nothing else running, sysmon preempts
// a raw sleep of 200 ms every 10 ms or so (the goroutine looks to it as
// if it ran that long); the EINTRs are not wakeups.
func TestTimerRawSleepPreempted(t *testing.T) {
	testenv.Need(t, testenv.Root) // SCHED_FIFO
	const interval = 200 * time.Millisecond
	r, err := NewWorkload(Workload{Kind: "timer", Params: &Timer{Interval: interval, Priority: 10, Sleep: TimerSleepRaw}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := runFor(t, r, 700*time.Millisecond)
	if st.Ops < 2 || st.Ops > 3 || st.Metrics[MetricTimerLateness].Count() != st.Ops {
		t.Errorf("%d wakeups, %d lateness readings in 700ms at %v, want 3 (2 if the machine stalled)", st.Ops, st.Metrics[MetricTimerLateness].Count(), interval)
	}
	if n := st.Syscalls["clock_nanosleep"]; n < st.Ops+10 {
		t.Errorf("%d clock_nanosleep calls for %d wakeups, want sysmon's preemptions as well", n, st.Ops)
	}
	if mx := st.Metrics[MetricTimerLateness].Max(); mx > uint64(interval/2) {
		t.Errorf("max lateness %v at %v: a deadline was lost to an EINTR", time.Duration(mx), interval)
	}
}

// TestTimerRawSleepNeedsPreemptSignals: without the runtime's preemption
// signals a raw sleep would hold up a stop of the world until its
// deadline, so it is refused; a runtime sleep is not.
func TestTimerRawSleepNeedsPreemptSignals(t *testing.T) {
	for _, tt := range []struct {
		godebug string
		off     bool
	}{
		{"", false},
		{"asyncpreemptoff=1", true},
		{"madvdontneed=1, asyncpreemptoff=1", true},
		{"asyncpreemptoff=1,asyncpreemptoff=0", false},
		{"asyncpreemptoff=0", false},
	} {
		if got := asyncPreemptOff(tt.godebug); got != tt.off {
			t.Errorf("asyncPreemptOff(%q) = %v, want %v", tt.godebug, got, tt.off)
		}
	}
	t.Setenv("GODEBUG", "asyncpreemptoff=1")
	_, err := NewWorkload(Workload{Kind: "timer", Params: &Timer{MLock: ref(false), DMALatency: ref(DMALatencyLeave), Sleep: TimerSleepRaw}})
	if err == nil || !strings.Contains(err.Error(), "set sleep: runtime") {
		t.Errorf("raw sleep with asyncpreemptoff=1: error %v", err)
	}
	r, err := NewWorkload(Workload{Kind: "timer", Params: &Timer{MLock: ref(false), DMALatency: ref(DMALatencyLeave), Sleep: TimerSleepRuntime}})
	if err != nil {
		t.Fatalf("runtime sleep with asyncpreemptoff=1: %v", err)
	}
	r.Close()
}

// TestCPUs: with cpus, each trial's measured threads run on the listed
// CPUs whatever offset the trial drew (thread i on cpus[(i+offset) mod
// len]), even on one CPU, for the timer, syscall and pingpong kinds (a
// ping-pong pair listed one CPU runs both sides on it); a CPU the process
// may not run on fails at preparation.
func TestCPUs(t *testing.T) {
	testenv.Need(t, testenv.Root) // the timer's mlockall
	if runtime.NumCPU() < 2 {
		t.Fatal("needs 2 CPUs")
	}
	timer := func(cpus ...int) Workload {
		return Workload{Kind: "timer", Threads: len(cpus), CPUs: cpus, Params: &Timer{Interval: time.Millisecond}}
	}
	for _, tt := range []struct {
		w      Workload
		offset int
		want   []int
	}{
		{timer(1), 0, []int{1}},
		{timer(1), 1, []int{1}},
		{timer(0), 1, []int{0}},
		{timer(0, 1), 1, []int{0, 1}},
		{Workload{Kind: "syscall", Threads: 2, CPUs: []int{1}, Params: &Syscall{Name: "getppid"}}, 1, []int{1}},
		{Workload{Kind: "pingpong", Pairs: 1, CPUs: []int{0}, Params: &Pingpong{Channel: "pipe"}}, 1, []int{0}},
		{Workload{Kind: "pingpong", Pairs: 2, CPUs: []int{0, 1}, Params: &Pingpong{Channel: "futex"}}, 1, []int{0, 1}},
	} {
		r, err := NewWorkload(tt.w)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(WithCPUOffset(context.Background(), tt.offset), 30*time.Millisecond)
		st, err := r.Run(ctx)
		cancel()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(st.CPUs, tt.want) || st.Ops == 0 {
			t.Errorf("%s cpus %v, offset %d: ran on %v (%d ops), want %v", tt.w.Kind, tt.w.CPUs, tt.offset, st.CPUs, st.Ops, tt.want)
		}
	}
	_, err := NewWorkload(Workload{Kind: "timer", CPUs: []int{maxCPU}})
	var ce *CPUsError
	if !errors.As(err, &ce) || ce.CPU != maxCPU || !strings.Contains(err.Error(), "not one this process may run on (0-") {
		t.Errorf("timer cpus [%d]: %v, want a CPUsError naming it", maxCPU, err)
	}
	if _, err := NewWorkload(Workload{Kind: "pingpong", CPUs: []int{maxCPU}, Params: &Pingpong{Channel: "pipe"}}); !errors.As(err, new(*CPUsError)) {
		t.Errorf("pingpong on CPU %d: %v, want a CPUsError", maxCPU, err)
	}
}

func TestCPUList(t *testing.T) {
	for _, s := range []string{"1", "0-2,5", "0,2,4-7"} {
		c, err := ParseCPUList(s)
		if err != nil || FormatCPUList(c) != s {
			t.Errorf("%q: %v %v, formats as %q", s, c, err, FormatCPUList(c))
		}
	}
	if c, _ := ParseCPUList(" 3 , 1 "); !slices.Equal(c, []int{1, 3}) {
		t.Errorf("unsorted list reads as %v, want [1 3]", c)
	}
}

// TestFirstDeadlines: the threads' deadlines are spread evenly over the
// interval, each thread's first one is after the moment it asks, and
// never more than an interval after it.
func TestFirstDeadlines(t *testing.T) {
	const start, interval, n = int64(1_000_000), int64(1_000_000), 4
	for _, now := range []int64{start, start + 1, start + 250_000, start + 999_999, start + 3_700_000} {
		var phases []int64
		for i := range n {
			d := firstDeadline(start, now, interval, i, n)
			if d <= now || d > now+interval {
				t.Errorf("now %d, thread %d: first deadline %d, want in (%d, %d]", now, i, d, now, now+interval)
			}
			phases = append(phases, (d-start)%interval)
		}
		if want := []int64{0, 250_000, 500_000, 750_000}; !slices.Equal(phases, want) {
			t.Errorf("now %d: phases %v, want %v", now, phases, want)
		}
	}
}
