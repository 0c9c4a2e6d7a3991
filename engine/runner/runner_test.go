package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestMain lets the test binary serve as its own trial worker.
func TestMain(m *testing.M) {
	if IsWorker() {
		os.Exit(WorkerMain())
	}
	os.Exit(m.Run())
}

func syscallRead(t *testing.T, trials int, d time.Duration) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Lookup("syscall-read")
	if err != nil {
		t.Fatal(err)
	}
	c := *s
	c.Trials, c.Duration, c.Warmup = trials, d, 0
	return &c
}

func TestTrialsRunInSeparateWorkers(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{syscallRead(t, 3, 150*time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Find("syscall-read")
	if s == nil || s.Trials != 3 {
		t.Fatalf("want 3 trials of syscall-read, got %+v", s)
	}
	if got := s.Gate["syscall.read"]["p99"]; got != 0.10 {
		t.Errorf("resolved gate %v, want syscall.read p99 at 10%% from the scenario's gate block", s.Gate)
	}
	m := s.Metrics["syscall.read"]
	pids := map[int]bool{}
	for i, tr := range m.Trials {
		if tr.PID == 0 || tr.PID == os.Getpid() {
			t.Errorf("trial %d ran in pid %d (this process %d): want a worker of its own", i, tr.PID, os.Getpid())
		}
		pids[tr.PID] = true
		if len(tr.CPUs) != 1 {
			t.Errorf("trial %d: CPUs %v, want the one its thread was pinned to", i, tr.CPUs)
		}
		if tr.BootID == "" {
			t.Errorf("trial %d: no boot id", i)
		}
		if tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count == 0 {
			t.Errorf("trial %d: the worker's tracer counted %d reads of its %d", i, tr.Summary.Count, tr.Ops)
		}
	}
	if len(pids) != 3 {
		t.Errorf("trials ran in %d distinct processes, want 3", len(pids))
	}
	if len(s.Tracers) == 0 {
		t.Errorf("tracer variants not recorded")
	}
}

func TestInterruptedRunLeavesNoWorker(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	before, err := tracing.LoadedPrograms()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var trialsDone int
	req := Request{
		Scenarios: []*scenarios.Scenario{syscallRead(t, 50, 300*time.Millisecond)},
		Progress: func(e Event) {
			if e.Phase == "trial" && e.Measured != nil {
				trialsDone++
				if trialsDone == 1 {
					// Cut the run in the middle of the next trial.
					time.AfterFunc(150*time.Millisecond, cancel)
				}
			}
		},
	}
	start := time.Now()
	res, err := Run(ctx, req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the interrupted run took %s to return", time.Since(start))
	}
	if !res.Partial || len(res.Scenarios) != 1 || res.Scenarios[0].Trials != 1 {
		t.Errorf("want a partial Result with the one finished trial, got partial=%v scenarios=%d", res.Partial, len(res.Scenarios))
	}
	if w := workersOf(t, os.Getpid()); len(w) > 0 {
		t.Errorf("worker processes left running: %v", w)
	}
	noProgramsLeft(t, before, "the interrupted run")
}

// noProgramsLeft fails t if BPF programs loaded since before (the ids
// tracing.LoadedPrograms gave then) are still loaded after what, given
// 5 s to go.
func noProgramsLeft(t *testing.T, before []ebpf.ProgramID, what string) {
	t.Helper()
	after, err := tracing.LoadedPrograms()
	if err != nil {
		t.Fatal(err)
	}
	var added []ebpf.ProgramID
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, id)
		}
	}
	if left, _ := tracing.StillLoaded(added, 5*time.Second); len(left) > 0 {
		t.Errorf("BPF programs left loaded after %s: %v", what, left)
	}
}

func TestWorkerFailureIsReported(t *testing.T) {
	s := syscallRead(t, 1, 100*time.Millisecond)
	// A program that is not tailgate gives no reply: the error says so
	// with the worker's last words.
	_, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}, Exe: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "trial worker") {
		t.Errorf("err = %v, want one naming the trial worker", err)
	}
}

// workersOf lists the live children of pid that are trial workers.
func workersOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(workerEnv+"=1")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

// TestTrialsCarryEvidence: each trial of a host run keeps its slowest
// events, from the worker that ran it (its kernel frames named by the
// parent, the rest there); none with
// evidence: 0.
func TestTrialsCarryEvidence(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	s := syscallRead(t, 2, 150*time.Millisecond)
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}})
	if err != nil {
		t.Fatal(err)
	}
	trials := res.Find("syscall-read").Metrics["syscall.read"].Trials
	for i, tr := range trials {
		if len(tr.Slowest) != s.Evidence {
			t.Fatalf("trial %d: %d slowest events, want %d", i, len(tr.Slowest), s.Evidence)
		}
		e := tr.Slowest[0]
		if e.PID != tr.PID {
			t.Errorf("trial %d: slowest event of pid %d, the trial's worker is %d", i, e.PID, tr.PID)
		}
		if uint64(tr.Summary.Max) < e.LatencyNs*99/100 {
			t.Errorf("trial %d: slowest event %d ns above the histogram's max %v", i, e.LatencyNs, tr.Summary.Max)
		}
		if us := strings.Join(e.UserStack, " "); !strings.Contains(us, "syscallLoad") {
			t.Errorf("trial %d: user stack does not name the workload: %s", i, us)
		}
		if len(e.KernelStack) == 0 || strings.HasPrefix(e.KernelStack[0], "bpf_prog_") {
			t.Errorf("trial %d: kernel stack %v empty or starting in the tracer", i, e.KernelStack)
		}
		// The worker leaves the kernel's own frames as hex; the parent
		// names them from the kallsyms it read once.
		for _, f := range e.KernelStack {
			if strings.HasPrefix(f, "0x") {
				t.Errorf("trial %d: kernel frame %s left unnamed in %v", i, f, e.KernelStack)
				break
			}
		}
		// The interference log is loaded with evidence: every event
		// has its CPU's, within its latency (20 µs for the clock reads).
		for _, e := range tr.Slowest {
			in := e.Interference
			if in == nil {
				t.Fatalf("trial %d: an event of %d ns without interference", i, e.LatencyNs)
			}
			if sum := in.HardirqNs + in.SoftirqNs + in.TasksNs; sum > e.LatencyNs+20000 {
				t.Errorf("trial %d: interference %d ns of an event of %d ns", i, sum, e.LatencyNs)
			}
		}
	}
	s.Evidence = 0
	res, err = Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Find("syscall-read").Metrics["syscall.read"].Trials {
		if len(tr.Slowest) != 0 {
			t.Errorf("evidence: 0 kept %d events", len(tr.Slowest))
		}
	}
}

// TestSkipUnsupported: a run of every built-in passes over a scenario
// whose tracer this kernel cannot load, saying why in the Result; a run
// that names it fails, an error the CLI can tell apart.
func TestSkipUnsupported(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	s, err := scenarios.Lookup("kfunc-vfs-read")
	if err != nil {
		t.Fatal(err)
	}
	s.Trials, s.Duration, s.Warmup = 1, 100*time.Millisecond, 0
	_, perr := kfunc.Probe()
	supported := perr == nil
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s, syscallRead(t, 1, 100*time.Millisecond)}, SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Find("syscall-read") == nil {
		t.Error("the scenario after the skipped one did not run")
	}
	if supported {
		if res.Find("kfunc-vfs-read") == nil || len(res.Skipped) != 0 {
			t.Errorf("kfunc loads here but its scenario did not run: skipped %v", res.Skipped)
		}
		return
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Scenario != "kfunc-vfs-read" || !strings.Contains(res.Skipped[0].Reason, "kfunc") {
		t.Errorf("skipped = %+v, want kfunc-vfs-read with the tracer's reason", res.Skipped)
	}
	_, err = Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}})
	if !errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, tracing.ErrBadTarget) {
		t.Errorf("named unsupported scenario: err = %v, want one that is ErrNotSupported (through the worker's reply)", err)
	}
}

// Each trial records what its CPU spent outside the workload: a thread
// of this process spinning on the trial's pinned CPU is another task to
// the trial's worker, about half the CPU's time beside it.
func TestTrialCPUTimeCountsOtherTasks(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	cpu := 0
	trial := func() *result.CPUTime {
		res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{syscallRead(t, 1, 400*time.Millisecond)}, CPUOffset: &cpu})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Find("syscall-read").Metrics["syscall.read"].Trials[0]
		if !slices.Equal(tr.CPUs, []int{cpu}) || tr.CPUTime == nil || tr.CPUTime.WindowNs < uint64(350*time.Millisecond) {
			t.Fatalf("trial on CPUs %v, CPU time %+v: want CPU %d and a window of about 400ms", tr.CPUs, tr.CPUTime, cpu)
		}
		return tr.CPUTime
	}
	quiet := trial()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			t.Error(err)
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	busy := trial()
	close(stop)
	<-done
	share := func(c *result.CPUTime) float64 { return float64(c.OtherTasksNs) / float64(c.WindowNs) }
	t.Logf("other tasks' share: %.2f beside a spinning thread, %.2f without", share(busy), share(quiet))
	if share(busy) < 0.15 || share(busy) < share(quiet)+0.1 {
		t.Errorf("other tasks' share of the trial's CPU: %.2f beside a spinning thread, %.2f without; want ≥ 0.15 and 0.1 more", share(busy), share(quiet))
	}
}

// The kernel's BPF run statistics are on in the warmup alone, which gives
// each trial its tracer's cost: in a trial every program run would pay
// their two clock reads, inside the latencies it measures. A program of
// the test's own on every syscall's entry counts its runs only while they
// are on.
func TestRunStatsOnlyInWarmup(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.RawTracepoint,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sys_enter", Program: prog})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	runs := func() uint64 {
		st, err := prog.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.RunCount
	}
	// The statistics are the machine's: another process may hold them on
	// (another tailgate's warmup, a cost benchmark), which this test
	// cannot tell from its own. Wait for a quiet moment.
	for quiet := time.Now().Add(20 * time.Second); ; {
		n := runs()
		time.Sleep(100 * time.Millisecond)
		if runs() == n {
			break
		}
		if time.Now().After(quiet) {
			t.Fatal("another process keeps the kernel's BPF statistics on: run this test alone")
		}
	}
	s := syscallRead(t, 2, 300*time.Millisecond)
	s.Warmup = 200 * time.Millisecond
	var warm, trials, done uint64
	progress := func(e Event) {
		switch {
		case e.Phase == PhaseWarmup:
			warm = runs()
		case e.Phase == PhaseTrial && e.Trial == 1 && e.Measured == nil:
			trials = runs()
		case e.Phase == PhaseDone:
			done = runs()
		}
	}
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}, InProcess: true, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if trials-warm < 1000 {
		t.Errorf("the warmup counted %d syscalls: want the statistics on in it", trials-warm)
	}
	if done-trials > (trials-warm)/100 {
		t.Errorf("the trials counted %d syscalls (the warmup %d): want the statistics off in them", done-trials, trials-warm)
	}
	for i, tr := range res.Scenarios[0].Metrics["syscall.read"].Trials {
		if tr.TracerCostNs <= 0 {
			t.Errorf("trial %d: no tracer cost recorded", i+1)
		}
	}
}
