package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// RunPair runs one trial of every scenario of reqs[0] and of reqs[1]
// interleaved in slices (see sliceControl): for each scenario, a sliced
// worker of each side starts and attaches, both warm up (warmUp), and then
// they take turns at slices of at most slice until each has run the
// scenario's duration. The turns go in pairs, first's side first in even
// pairs and second in odd ones (A B B A A B ...), so that a drift across
// the round falls on both alike. Both sides' threads are pinned from the
// same CPU offset. Each side's Result is returned, with the trials that
// finished before an error, marked partial.
func RunPair(ctx context.Context, reqs [2]Request, first int, slice time.Duration) ([2]*result.Result, error) {
	var res [2]*result.Result
	for side := range reqs {
		res[side] = newResult(reqs[side])
	}
	finish := func(err error) ([2]*result.Result, error) {
		for _, r := range res {
			finishResult(r, err)
		}
		return res, err
	}
	switch {
	case slice <= 0:
		return finish(fmt.Errorf("slices of %s: want a positive length", slice))
	case first != 0 && first != 1:
		return finish(fmt.Errorf("first side %d: want 0 or 1", first))
	case len(reqs[0].Scenarios) != len(reqs[1].Scenarios):
		return finish(fmt.Errorf("a pair runs the same scenarios on both sides, got %d and %d", len(reqs[0].Scenarios), len(reqs[1].Scenarios)))
	}
	var exes [2]string
	for side, req := range reqs {
		if req.InProcess {
			return finish(errors.New("a pair runs its trials in workers, not in process"))
		}
		if req.NeedsBPF() {
			if err := tracing.CheckPrivileges(); err != nil {
				return finish(err)
			}
		}
		var err error
		if exes[side], err = req.workerExe(); err != nil {
			return finish(err)
		}
	}
	removeStaleGroups() // of runs killed outright
	// Each side's workers attach tracers of its own: the two run at once.
	for side := range reqs {
		if reqs[side].Loads == nil || side == 1 && reqs[1].Loads == reqs[0].Loads {
			reqs[side].Loads = NewLoads()
			defer reqs[side].Loads.Close()
		}
	}
	for i := range reqs[0].Scenarios {
		var ss [2]*scenarios.Scenario
		for side, req := range reqs {
			ss[side] = req.Resolve(req.Scenarios[i])
		}
		p := pairScenario{reqs: reqs, exes: exes, ss: ss, first: first, slice: slice}
		for side, req := range reqs {
			p.emit[side] = emitter(ss[side], i+1, len(req.Scenarios), req.Progress)
		}
		srs, err := pairTrial(ctx, p)
		for side, sr := range srs {
			if sr != nil {
				sr.Executables = scenarios.Executables(ss[side])
				res[side].Scenarios = append(res[side].Scenarios, *sr)
			}
		}
		if err != nil {
			return finish(fmt.Errorf("scenario %s: %w", ss[0].Name, err))
		}
	}
	return finish(nil)
}

// pairScenario is one scenario of a pair: each side's request, worker
// program, scenario (resolved) and progress, and how the turns go.
type pairScenario struct {
	reqs  [2]Request
	exes  [2]string
	ss    [2]*scenarios.Scenario
	emit  [2]func(Event)
	first int
	slice time.Duration
}

// pairTrial runs one sliced trial of p.ss[0] and of p.ss[1]; both sides'
// results, or none and the error.
func pairTrial(ctx context.Context, p pairScenario) (out [2]*result.Scenario, err error) {
	if err := p.check(); err != nil {
		return out, err
	}
	var ws [2]*slicedWorker
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.stop()
			}
		}
	}()
	if err := p.start(ctx, &ws); err != nil {
		return out, err
	}
	if err := p.takeTurns(ctx, ws); err != nil {
		return out, err
	}
	return p.finish(ctx, ws)
}

// check refuses two sides that cannot take turns at one trial.
func (p *pairScenario) check() error {
	ss := p.ss
	switch {
	case ss[0].Name != ss[1].Name:
		return fmt.Errorf("a pair runs the same scenario on both sides, got %s and %s", ss[0].Name, ss[1].Name)
	case ss[0].Duration != ss[1].Duration:
		return fmt.Errorf("the sides' trials differ in length (%s and %s)", ss[0].Duration, ss[1].Duration)
	}
	for _, s := range ss {
		if why := s.Whole(); why != "" {
			return fmt.Errorf("its trials cannot run in slices (%s)", why)
		}
	}
	return nil
}

// start starts each side's sliced worker into ws, pinned from one CPU
// offset, and waits until both have attached.
func (p *pairScenario) start(ctx context.Context, ws *[2]*slicedWorker) error {
	offset := cpuOffset()
	if p.reqs[0].CPUOffset != nil {
		offset = *p.reqs[0].CPUOffset
	}
	for _, side := range []int{p.first, 1 - p.first} {
		p.emit[side](Event{Phase: PhaseAttach})
	}
	loaded := p.attach()
	for side := range ws {
		w, err := startSliced(ctx, p.exes[side], p.ss[side], offset, loaded[side])
		if err != nil {
			return err
		}
		ws[side] = w
	}
	for _, w := range ws {
		if err := w.await(ctx, "ready"); err != nil {
			return err
		}
	}
	return nil
}

// attach returns each side's tracers attached, the round's first side's
// before the other's. Both sides' programs run at every hook, each
// counting its own task: a side's interval holds the other's program at
// its start when it attached first, at its end when second, and the two
// cost unlike (p99 ±6.5% in an A/A held in one order, BENCHMARKS.md
// "Attach order"), so the order is the round's draw too. Two sides of
// one scenario whose tracers are alike take each other's, kept attached:
// the first side takes the set attached first. Otherwise the second
// side's set is attached again when it attached first.
func (p *pairScenario) attach() [2]*tracing.Loaded {
	first, second := p.first, 1-p.first
	lf, ls := p.reqs[first].Loads, p.reqs[second].Loads
	if lf != ls && p.alike() {
		sf, okf := lf.attachedAt(p.ss[first])
		ss, oks := ls.attachedAt(p.ss[second])
		if okf && oks && sf > ss {
			lf, ls = ls, lf
		}
	}
	var loaded [2]*tracing.Loaded
	loaded[first] = lf.forScenario(p.ss[first])
	loaded[second] = ls.forScenarioAfter(p.ss[second], lf)
	return loaded
}

// alike says both sides run the same scenario with the same tracers: the
// same settings, paths and programs.
func (p *pairScenario) alike() bool {
	a, oka := loadKey(p.ss[0])
	b, okb := loadKey(p.ss[1])
	return oka && okb && a == b
}

// takeTurns has each side warm up (warmUp), then run its
// trial in slices of at most p.slice, the turns in pairs (A B B A A B
// ...), each side's SliceHook told as it starts and stops.
func (p *pairScenario) takeTurns(ctx context.Context, ws [2]*slicedWorker) (err error) {
	h := &holder{reqs: p.reqs, cur: -1}
	defer func() {
		if rerr := h.release(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	turns := [2]int{p.first, 1 - p.first}
	if err := p.warmUp(ctx, ws, h, turns); err != nil {
		return err
	}
	for side := range ws {
		p.emit[side](Event{Phase: PhaseTrial, Trial: 1})
	}
	left := [2]time.Duration{p.ss[0].Duration, p.ss[1].Duration}
	for k := 0; left[0] > 0 || left[1] > 0; k++ {
		order := turns
		if k%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, side := range order {
			d := min(p.slice, left[side])
			if d <= 0 {
				continue
			}
			if err := h.to(side); err != nil {
				return err
			}
			if err := ws[side].turn(ctx, fmt.Sprintf("slice %d", d.Nanoseconds())); err != nil {
				return err
			}
			left[side] -= d
		}
	}
	return h.release()
}

// warmUp has both sides warm up at once, or in turns, first's first, when
// either has a hook: a hook's setting holds machine-wide, so a side warms
// up with its own in force as it runs its slices. A warmup is not
// measured; what it does is the worker's own (its first faults, its
// allocations), which the other side's warmup beside it does not undo.
func (p *pairScenario) warmUp(ctx context.Context, ws [2]*slicedWorker, h *holder, turns [2]int) error {
	for _, side := range turns {
		p.emit[side](Event{Phase: PhaseWarmup})
	}
	if p.reqs[0].SliceHook == nil && p.reqs[1].SliceHook == nil {
		for _, side := range turns {
			if err := ws[side].say(ctx, "warm"); err != nil {
				return err
			}
		}
		for _, side := range turns {
			if err := ws[side].await(ctx, "ok"); err != nil {
				return err
			}
		}
		return nil
	}
	for _, side := range turns {
		if err := h.to(side); err != nil {
			return err
		}
		if err := ws[side].turn(ctx, "warm"); err != nil {
			return err
		}
	}
	return nil
}

// finish ends both workers' trial and collects each side's result.
func (p *pairScenario) finish(ctx context.Context, ws [2]*slicedWorker) (out [2]*result.Scenario, err error) {
	for _, w := range ws {
		if err := w.say(ctx, "end"); err != nil {
			return out, err
		}
	}
	var got [2]*result.Scenario
	for side, w := range ws {
		sr, err := w.finish(ctx)
		if err != nil {
			return out, err
		}
		got[side] = sr
	}
	for side, sr := range got {
		ops, elapsed, err := workerTrial(sr)
		if err != nil {
			return out, err
		}
		p.emit[side](Event{Phase: PhaseTrial, Trial: 1, Measured: &Measured{Ops: ops, Elapsed: elapsed, Events: events(sr)}})
		p.emit[side](Event{Phase: PhaseDone, Trial: 1})
	}
	return got, nil
}

// slicedWorker is a started sliced worker and the parent's end of its
// line.
type slicedWorker struct {
	*worker
	ctl    *os.File // commands to the worker (its fd 3)
	ackf   *os.File // its answers (its fd 4)
	ack    *bufio.Reader
	waited bool
	runErr error
}

func startSliced(ctx context.Context, exe string, s *scenarios.Scenario, offset int, loaded *tracing.Loaded) (*slicedWorker, error) {
	w, err := newWorker(ctx, exe, s, offset, true, loaded)
	if err != nil {
		return nil, err
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		w.closeLoaded()
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		w.closeLoaded()
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	w.cmd.ExtraFiles = append([]*os.File{cmdR, ackW}, w.cmd.ExtraFiles...) // fds 3 and 4, then the tracers'
	err = w.start()
	cmdR.Close()
	ackW.Close()
	if err != nil {
		cmdW.Close()
		ackR.Close()
		return nil, fmt.Errorf("start trial worker: %w", err)
	}
	return &slicedWorker{worker: w, ctl: cmdW, ackf: ackR, ack: bufio.NewReader(ackR)}, nil
}

// say sends the worker one command.
func (w *slicedWorker) say(ctx context.Context, line string) error {
	if _, err := io.WriteString(w.ctl, line+"\n"); err != nil {
		return w.died(ctx)
	}
	return nil
}

// await reads the worker's next answer and wants it to be want.
func (w *slicedWorker) await(ctx context.Context, want string) error {
	line, err := w.ack.ReadString('\n')
	if err != nil {
		return w.died(ctx)
	}
	if got := strings.TrimSpace(line); got != want {
		return fmt.Errorf("trial worker (pid %d) said %q, want %q", pidOf(w.cmd), got, want)
	}
	return nil
}

// turn has the worker run its warmup or one slice (command).
func (w *slicedWorker) turn(ctx context.Context, command string) error {
	if err := w.say(ctx, command); err != nil {
		return err
	}
	return w.await(ctx, "ok")
}

// holder tells the sides' hooks (Request.SliceHook) which one runs, only
// as that changes: each side's run of turns (its warmup; then A, B B,
// A A, ... of the slices) starts just after the other's ended, alike for
// both, and a setting a hook writes is written once per run, not around
// each slice.
type holder struct {
	reqs [2]Request
	cur  int // the side whose hook was told true last, -1 for none
}

// to makes side the running one.
func (h *holder) to(side int) error {
	if side == h.cur {
		return nil
	}
	if err := h.release(); err != nil {
		return err
	}
	h.cur = side // told false by release even when true fails
	if hook := h.reqs[side].SliceHook; hook != nil {
		return hook(true)
	}
	return nil
}

// release tells the running side's hook it stopped.
func (h *holder) release() error {
	if h.cur < 0 {
		return nil
	}
	side := h.cur
	h.cur = -1
	if hook := h.reqs[side].SliceHook; hook != nil {
		return hook(false)
	}
	return nil
}

// died is the error of a worker that left its line: the one its reply
// gives, after it exited.
func (w *slicedWorker) died(ctx context.Context) error {
	_, err := w.finish(ctx)
	if err == nil {
		err = fmt.Errorf("trial worker (pid %d) left the slice line", pidOf(w.cmd))
	}
	return err
}

// finish closes the line, waits for the worker to exit and reads its
// reply.
func (w *slicedWorker) finish(ctx context.Context) (*result.Scenario, error) {
	w.wait()
	return w.result(ctx, w.runErr)
}

// wait closes the line and waits for the worker to exit, once.
func (w *slicedWorker) wait() {
	if w.waited {
		return
	}
	w.ctl.Close()
	w.runErr = w.cmd.Wait()
	w.ackf.Close()
	w.waited = true
}

// stop ends a worker that has not finished: interrupted, and its line
// closed, it detaches its tracers and exits (killed after its grace).
func (w *slicedWorker) stop() {
	if w.waited {
		return
	}
	_ = w.cmd.Process.Signal(os.Interrupt)
	kill := time.AfterFunc(workerStopGrace, func() { _ = w.cmd.Process.Kill() })
	defer kill.Stop()
	w.wait()
	removeStaleGroups()
}
