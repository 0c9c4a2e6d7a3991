package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// turn is one slice as a side's SliceHook saw it.
type turn struct {
	side       int
	start, end time.Time
}

// pairRequests are two sides' requests for sc, whose slice hooks record
// the turns.
func pairRequests(sc *scenarios.Scenario, turns *[]turn) [2]Request {
	var mu sync.Mutex
	var reqs [2]Request
	offset := 0
	for side := range reqs {
		reqs[side] = Request{Scenarios: []*scenarios.Scenario{sc}, CPUOffset: &offset, Target: result.Target{Name: []string{"base", "head"}[side], Kind: "host"}}
		reqs[side].SliceHook = func(on bool) error {
			mu.Lock()
			defer mu.Unlock()
			if on {
				*turns = append(*turns, turn{side: side, start: time.Now()})
				return nil
			}
			(*turns)[len(*turns)-1].end = time.Now()
			return nil
		}
	}
	return reqs
}

// The two sides of a pair take turns: their slices never overlap, go
// A B B A A B ..., add up to the trial's duration on each side, and each
// side's tracer counts its own workload's reads only, not the other's.
// Their hooks are told as the running side changes, not around each
// slice.
func TestRunPairTakesTurns(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	sc := syscallRead(t, 1, 200*time.Millisecond)
	var turns []turn
	reqs := pairRequests(sc, &turns)
	res, err := RunPair(context.Background(), reqs, 1, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// The hooks hear of each side's runs: its warmup, then its slices
	// one or two back to back, A B B A A ... B B A from the first side.
	if len(turns) != 13 {
		t.Fatalf("%d runs, want a warmup a side and 11 runs of slices", len(turns))
	}
	if turns[0].side != 1 || turns[1].side != 0 {
		t.Errorf("warmups: side %d then side %d, want 1 then 0", turns[0].side, turns[1].side)
	}
	for i, tu := range turns {
		if i > 0 && tu.start.Before(turns[i-1].end) {
			t.Errorf("run %d (side %d) started before run %d ended", i, tu.side, i-1)
		}
		if i < 2 {
			continue
		}
		if want := []int{1, 0}[i%2]; tu.side != want {
			t.Errorf("run %d ran side %d, want %d (runs alternate from the first side)", i, tu.side, want)
		}
		slices := 2
		if i == 2 || i == len(turns)-1 {
			slices = 1
		}
		if d := tu.end.Sub(tu.start); d < time.Duration(slices)*20*time.Millisecond {
			t.Errorf("run %d took %s, want at least its %d slices of 20ms", i, d, slices)
		}
	}
	pids := map[int]bool{}
	for side, r := range res {
		s := r.Find("syscall-read")
		if s == nil || s.Trials != 1 {
			t.Fatalf("side %d: want one trial of syscall-read, got %+v", side, s)
		}
		tr := s.Metrics["syscall.read"].Trials[0]
		if tr.Slices != 10 {
			t.Errorf("side %d: trial ran in %d slices, want 10", side, tr.Slices)
		}
		if tr.Duration < 0.2 || tr.Duration > 0.3 {
			t.Errorf("side %d: trial measured %.3f s, want the 0.2 s of its slices", side, tr.Duration)
		}
		// The other side's reads, or the parent's line, counted here
		// would double the count or more.
		if tr.Ops == 0 || tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops*105/100 {
			t.Errorf("side %d: the tracer counted %d reads of the workload's %d", side, tr.Summary.Count, tr.Ops)
		}
		if tr.PID == 0 || tr.PID == os.Getpid() {
			t.Errorf("side %d ran in pid %d: want a worker of its own", side, tr.PID)
		}
		pids[tr.PID] = true
		if r.Partial {
			t.Errorf("side %d: partial Result: %s", side, r.Error)
		}
	}
	if len(pids) != 2 {
		t.Errorf("the sides ran in %d processes, want 2", len(pids))
	}
}

// A pair cut in the middle returns, leaves no worker running and no BPF
// program loaded.
// Two sides with no hooks warm up at once: the warmups of a round take
// one warmup's time, not two; each side's trial still counts only its
// own workload's reads.
func TestRunPairWarmsBothSidesAtOnce(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	sc := syscallRead(t, 1, 100*time.Millisecond)
	// Long enough that a warmup held up by other work (870 ms for one of
	// 400 ms in 1 of 50 reruns beside the noise neighbour, BENCHMARKS.md,
	// "Timing bounds of three tests") still ends well short of two.
	sc.Warmup = time.Second
	var mu sync.Mutex
	var warm, trial time.Time
	offset := 0
	var reqs [2]Request
	for side := range reqs {
		reqs[side] = Request{Scenarios: []*scenarios.Scenario{sc}, CPUOffset: &offset, Target: result.Target{Name: []string{"base", "head"}[side], Kind: "host"}}
		reqs[side].Progress = func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e.Phase == PhaseWarmup && warm.IsZero():
				warm = time.Now()
			case e.Phase == PhaseTrial && e.Measured == nil && trial.IsZero():
				trial = time.Now()
			}
		}
	}
	res, err := RunPair(context.Background(), reqs, 0, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	d := trial.Sub(warm)
	if d < sc.Warmup || d >= 2*sc.Warmup-100*time.Millisecond {
		t.Errorf("the warmups took %s: want one warmup's %s (two in turns take %s)", d, sc.Warmup, 2*sc.Warmup)
	}
	t.Logf("the warmups took %s", d)
	for side, r := range res {
		tr := r.Find("syscall-read").Metrics["syscall.read"].Trials[0]
		if tr.Ops == 0 || tr.Summary.Count > tr.Ops*105/100 {
			t.Errorf("side %d: the tracer counted %d reads of the workload's %d", side, tr.Summary.Count, tr.Ops)
		}
	}
}

// Each round's first side's tracers attached first: at a hook the
// kernel runs programs in the order they attached, and which side's
// interval holds the other's program depends on it, so the order is
// drawn with the round's first side. Sides alike take each other's kept
// sets and attach nothing after the first round; sides unlike attach the
// second side's again when the draw turns the order round.
func TestPairAttachesTheFirstSideFirst(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	sc := syscallRead(t, 1, 40*time.Millisecond)
	other := *sc
	other.Evidence++
	for _, tc := range []struct {
		name     string
		ss       [2]*scenarios.Scenario
		attaches int // after the first round's two
	}{
		{"alike", [2]*scenarios.Scenario{sc, sc}, 0},
		{"unlike", [2]*scenarios.Scenario{sc, &other}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := [2]*Loads{NewLoads(), NewLoads()}
			defer ls[0].Close()
			defer ls[1].Close()
			p := pairScenario{reqs: [2]Request{{Loads: ls[0]}, {Loads: ls[1]}}, ss: tc.ss}
			seqOf := func(o *tracing.Loaded) uint64 {
				for _, l := range ls {
					if l.by[l.attached] == o {
						return l.seq
					}
				}
				t.Fatalf("a set no Loads has attached")
				return 0
			}
			start := attachSeq.Load()
			for _, first := range []int{0, 0, 1, 1, 0} {
				p.first = first
				got := p.attach()
				if got[0] == nil || got[1] == nil || got[0] == got[1] {
					t.Fatalf("sets %p and %p: want one each", got[0], got[1])
				}
				if a, b := seqOf(got[first]), seqOf(got[1-first]); a >= b {
					t.Errorf("side %d first: its set attached at %d, the other's at %d", first, a, b)
				}
			}
			if n := int(attachSeq.Load()-start) - 2; n != tc.attaches {
				t.Errorf("%d attaches after the first round, want %d", n, tc.attaches)
			}
		})
	}
}

func TestInterruptedPairLeavesNothing(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	before, err := tracing.LoadedPrograms()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var turns []turn
	reqs := pairRequests(syscallRead(t, 1, 5*time.Second), &turns)
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	res, err := RunPair(ctx, reqs, 0, 25*time.Millisecond)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("the interrupted pair took %s to return", took)
	}
	for side, r := range res {
		if !r.Partial || len(r.Scenarios) != 0 {
			t.Errorf("side %d: want a partial Result without the cut trial, got partial=%v scenarios=%d", side, r.Partial, len(r.Scenarios))
		}
	}
	if w := workersOf(t, os.Getpid()); len(w) > 0 {
		t.Errorf("worker processes left running: %v", w)
	}
	noProgramsLeft(t, before, "the interrupted pair")
}

// A hook that fails ends the pair with its error, is told false after
// every true (the one that failed too: a side's settings are put back),
// and leaves no worker or BPF program behind.
func TestPairHookErrorEndsIt(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	before, err := tracing.LoadedPrograms()
	if err != nil {
		t.Fatal(err)
	}
	var turns []turn
	reqs := pairRequests(syscallRead(t, 1, 200*time.Millisecond), &turns)
	var on, off [2]int
	for side := range reqs {
		record := reqs[side].SliceHook
		reqs[side].SliceHook = func(running bool) error {
			if running {
				on[side]++
				if side == 1 && on[side] == 3 {
					return errors.New("sysctl kernel.x: refused")
				}
				return record(running)
			}
			off[side]++
			if len(turns) > 0 && turns[len(turns)-1].side == side {
				return record(running)
			}
			return nil
		}
	}
	_, err = RunPair(context.Background(), reqs, 0, 20*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "sysctl kernel.x: refused") {
		t.Fatalf("err = %v, want the hook's", err)
	}
	if on != off || on[1] != 3 {
		t.Errorf("hook told true %v and false %v times per side, want as many of each and side 1 ending at its third", on, off)
	}
	if w := workersOf(t, os.Getpid()); len(w) > 0 {
		t.Errorf("worker processes left running: %v", w)
	}
	noProgramsLeft(t, before, "the pair a hook ended")
}

// A scenario whose command runs its own course is refused before any
// worker starts.
func TestRunPairRefusesWholeWorkloads(t *testing.T) {
	sc, err := scenarios.Parse("cmd.yaml", []byte("name: cmd\nworkload:\n  kind: exec\n  command: [/bin/true]\ntracers:\n  syscall:\n    syscalls: [read]\nduration: 100ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	var turns []turn
	_, err = RunPair(context.Background(), pairRequests(sc, &turns), 0, 25*time.Millisecond)
	if err == nil || len(turns) != 0 {
		t.Fatalf("err = %v after %d slices, want a refusal before any", err, len(turns))
	}
	t.Log(err)
}

// The CPU time of a sliced trial is summed signed over its slices:
// /proc/stat's tick-sized errors of short windows cancel instead of
// adding up as other work. Two slices, one read a tick high and one a
// tick low, with no other work: none is reported.
func TestSlicedCPUTimeCancelsTickErrors(t *testing.T) {
	at := time.Unix(1000, 0)
	snap := func(ms int, busy, own int64) cpuSnap {
		return cpuSnap{at: at.Add(time.Duration(ms) * time.Millisecond), cpus: map[int]cpuStat{0: {busy: busy}}, own: own}
	}
	const tick = int64(10 * time.Millisecond)
	ms := int64(time.Millisecond)
	// Slice 1: the workload ran 25 ms, /proc/stat says 30 (a tick's error
	// of 5 ms up); slice 2: it ran 25 ms, /proc/stat says 20.
	var sum cpuSums
	sum.add(cpuDelta(snap(0, 0, 0), snap(25, 30*ms, 25*ms), []int{0}))
	sum.add(cpuDelta(snap(50, 30*ms, 25*ms), snap(75, 50*ms, 50*ms), []int{0}))
	got := sum.time()
	if got.OtherTasksNs != 0 || got.WindowNs != uint64(50*ms) {
		t.Errorf("summed: other tasks %d ns in a %d ns window, want 0 in %d", got.OtherTasksNs, got.WindowNs, 50*ms)
	}
	// Clipped per slice, the first slice's error would have stayed.
	if first := cpuDelta(snap(0, 0, 0), snap(25, 30*ms, 25*ms), []int{0}).time(); first.OtherTasksNs != uint64(5*ms) {
		t.Errorf("one slice alone: other tasks %d ns, want its 5 ms error", first.OtherTasksNs)
	}
	// Real other work shows through the sum: 10 ms of it in slice 2.
	sum.add(cpuDelta(snap(100, 50*ms, 50*ms), snap(125, 50*ms+tick+25*ms, 75*ms), []int{0}))
	if got := sum.time(); got.OtherTasksNs != uint64(tick) {
		t.Errorf("with 10 ms of other work: other tasks %d ns, want %d", got.OtherTasksNs, tick)
	}
}

// JoinHooks nests: the outer hook starts first and stops last, both are
// called whatever the other returns, and their errors are joined.
func TestJoinHooks(t *testing.T) {
	var calls []string
	hook := func(name string, fail bool) func(bool) error {
		return func(on bool) error {
			calls = append(calls, fmt.Sprintf("%s %v", name, on))
			if fail {
				return errors.New(name + " failed")
			}
			return nil
		}
	}
	j := JoinHooks(hook("outer", true), hook("inner", false))
	err1, err2 := j(true), j(false)
	if want := "outer true,inner true,inner false,outer false"; strings.Join(calls, ",") != want {
		t.Errorf("calls %v, want %s", calls, want)
	}
	if err1 == nil || err2 == nil || !strings.Contains(err1.Error(), "outer failed") {
		t.Errorf("errors %v, %v: want the outer hook's each time", err1, err2)
	}
	if JoinHooks(nil, nil) != nil {
		t.Error("JoinHooks(nil, nil) is not nil")
	}
	calls = nil
	if err := JoinHooks(nil, hook("only", false))(true); err != nil || len(calls) != 1 {
		t.Errorf("JoinHooks(nil, h): %v, calls %v, want h alone", err, calls)
	}
}
