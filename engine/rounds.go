package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Plan says how rounds run: in round r every target runs one trial of each
// scenario, and the plan says how many rounds, in what order, how often a
// broken trial runs again, and when to stop early.
type Plan struct {
	// Rounds is the most rounds to run (at least 1).
	Rounds int
	// Retries is how many times a broken trial (a guest oops, a garbled
	// result) runs again; its broken try is discarded.
	Retries int
	// Budget, when > 0, starts no round once this much time has passed.
	Budget time.Duration
	// Look, when set, is called after every round with each target's
	// trials so far; it returns true to stop. With a Look every scenario
	// runs in every round.
	Look func(round int, results []*result.Result) (bool, error)
	// Order, when set, gives the order of the targets in round r (a
	// permutation of their indexes), and makes a round's trials a pair:
	// each is stamped with its round and slot. Alternate otherwise.
	Order func(r int) []int
	// CPUOffset, when set, gives the CPU offset every target's host
	// trials of round r are pinned from (runner.Request.CPUOffset).
	CPUOffset func(r int) int
	// Slice, when > 0 and the two targets' trials can share the machine's
	// time (Interleaves), runs each round's two trials interleaved in
	// slices of at most this long (runner.RunPair), the order's first
	// side first. Otherwise each trial runs whole, one after the other.
	Slice time.Duration
	// Jobs, when above 1 and every target is Independent, runs a round's
	// trials at once, up to Jobs of them.
	Jobs int
	// Progress shows the rounds; nil shows them on the log Rounds is
	// given. Rounds ends it (progress.Reporter.End).
	Progress *progress.Reporter
}

// RoundsOptions are what the commands that run targets in rounds (a
// matrix, a same-job gate) share beyond their Plan: retries, where the
// Results go, how they are compared, where progress goes.
type RoundsOptions struct {
	// Retries is how many times a broken round (a guest oops, a garbled
	// result) runs again; its broken try is discarded.
	Retries int
	// Jobs, when above 1, runs a round's trials at once where every
	// target is Independent (Plan.Jobs).
	Jobs int
	// Output is -o: where each target's Result goes (OutputPath), ""
	// for nowhere.
	Output string
	// Compare are the comparison's options; a gate sets the look
	// fields.
	Compare report.Options
	// Log receives progress, the plan and what was written.
	Log io.Writer
	// Progress is how the progress shows: progress.Verbose for -v.
	Progress progress.Mode
}

// Independent is a target whose trials measure nothing of the machine
// they run on (a VM in virtual time: its clocks count its own
// instructions), so that several may run at once (Plan.Jobs).
type Independent interface {
	// Independent says why the target's trials depend on the machine's
	// load, "" when they do not.
	Independent() string
}

// AtOnce says why the trials of targets cannot run at once, "" when
// they can: every target is Independent.
func AtOnce(targets []Target) string {
	for _, t := range targets {
		it, ok := t.(Independent)
		if !ok {
			return fmt.Sprintf("target %s measures this machine's time", t.Name())
		}
		if why := it.Independent(); why != "" {
			return why
		}
	}
	return ""
}

// Interleaves says why the trials of reqs (prepared, one per target)
// cannot run interleaved in slices, "" when they can: two targets that
// are Interleavers, running scenarios whose workloads can be sliced.
func Interleaves(targets []Target, reqs []runner.Request) string {
	if len(targets) != 2 {
		return fmt.Sprintf("%d targets; slices pair two", len(targets))
	}
	for i, t := range targets {
		it, ok := t.(Interleaver)
		if !ok {
			return fmt.Sprintf("target %s runs its trials whole", t.Name())
		}
		if _, _, why := it.Interleave(reqs[i]); why != "" {
			return why
		}
		for _, s := range reqs[i].Scenarios {
			if why := s.Whole(); why != "" {
				return fmt.Sprintf("scenario %s: %s", s.Name, why)
			}
		}
	}
	return ""
}

// Stop says why rounds ended.
type Stop string

const (
	StopRounds  Stop = "rounds"  // the planned rounds ran
	StopBudget  Stop = "budget"  // the budget was spent
	StopDecided Stop = "decided" // the look said stop
	StopLooks   Stop = "looks"   // the looks planned ran out (set by a gate)
)

// Ran says how rounds went: how many ran, how long they took, why they
// ended.
type Ran struct {
	Rounds  int
	Elapsed time.Duration
	Why     Stop
	// Whole says why a plan's Slice was not used, the trials running
	// whole ("" when they ran in slices, or no Slice was asked for).
	Whole string
}

// PlannedRounds is the rounds a fixed run makes: spec.Trials, else the
// most trials any scenario asks for.
func PlannedRounds(spec Spec) int {
	rounds := spec.Trials
	if rounds == 0 {
		for _, s := range spec.Scenarios {
			rounds = max(rounds, s.Trials)
		}
	}
	return max(rounds, 1)
}

// Alternate is the order the targets run in round r (1-based): forwards
// in odd rounds, backwards in even ones (A B, B A, A B, ... for two), so
// that a drift in the machine over a pair of rounds falls on every target
// alike, and no target always runs right after another.
func Alternate(r, n int) []int {
	out := make([]int, n)
	for i := range out {
		if r%2 == 1 {
			out[i] = i
		} else {
			out[i] = n - 1 - i
		}
	}
	return out
}

// Releaser is a target that holds something of the machine's across
// rounds until Release (a variant whose sysctls take turns in slices holds
// them suspended under a journal).
type Releaser interface {
	Release() error
}

// Turner is a target that changes the machine as each of its runs of
// slices starts and puts it back as it ends.
type Turner interface {
	// Turns says what it changes, for progress ("base's sysctls"); ""
	// for nothing.
	Turns() string
}

// Booter is a target that boots a kernel for each trial.
type Booter interface {
	// Booting names the kernel, for progress.
	Booting() string
}

// CheckRounds refuses, before anything runs, what would fail rounds of
// spec on targets later: where output puts each target's Result
// (CheckTargetOutputs), a variant's sysctl that this kernel under root
// lacks or will not take (CheckVariants, which first restores what a run
// that died left changed), targets on different clocks (CheckClocks),
// overrides no run could take.
func CheckRounds(targets []Target, spec Spec, output, root string, log io.Writer) error {
	if err := CheckTargetOutputs(output, targets); err != nil {
		return err
	}
	if err := CheckVariants(targets, root, log); err != nil {
		return err
	}
	if err := CheckClocks(targets); err != nil {
		return err
	}
	return spec.Check()
}

// Rounds runs the interleaved trials of spec on targets as plan says,
// with progress on log. It returns each target's trials (nil for a
// target with none), how the rounds went, and the first error, after
// which no further round starts.
func Rounds(ctx context.Context, targets []Target, spec Spec, plan Plan, log io.Writer) ([]*result.Result, Ran, error) {
	res, ran, err := runRounds(ctx, targets, spec, plan, log)
	// What a target holds across rounds is let go however they ended.
	for _, t := range targets {
		if r, ok := t.(Releaser); ok {
			if rerr := r.Release(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	return res, ran, err
}

func runRounds(ctx context.Context, targets []Target, spec Spec, plan Plan, log io.Writer) ([]*result.Result, Ran, error) {
	rr, err := prepareRounds(targets, spec, plan)
	defer rr.close()
	if err != nil {
		return make([]*result.Result, len(targets)), Ran{Why: StopRounds}, err
	}
	rr.start = time.Now()
	if rr.p = plan.Progress; rr.p == nil {
		rr.p = progress.New(log, progress.Options{})
	}
	defer rr.p.End()
	if plan.Budget > 0 {
		rr.p.Deadline(rr.start.Add(plan.Budget))
	}
	if plan.Look == nil || plan.Budget <= 0 {
		// A look plans the rounds from the pace and the budget.
		rr.p.Plan(rr.rounds, "rounds")
	}
	rr.chooseWay()
	var firstDone time.Time
	for r := 1; r <= rr.rounds; r++ {
		if plan.Budget > 0 && r > 1 && !fits(r-1, time.Since(rr.start), time.Since(firstDone), plan.Budget) {
			rr.ran.Why = StopBudget
			break
		}
		if err := rr.round(ctx, r); err != nil {
			rr.ran.Rounds, rr.ran.Elapsed = r-1, time.Since(rr.start)
			return rr.results(), rr.ran, err
		}
		if r == 1 {
			firstDone = time.Now()
		}
		rr.ran.Rounds, rr.ran.Elapsed = r, time.Since(rr.start)
		stop := false
		if plan.Look != nil {
			// The look first: it may plan the rounds anew, which the
			// progress then counts this round against.
			out := rr.results()
			var err error
			if stop, err = plan.Look(r, out); err != nil {
				rr.p.Add(1)
				return out, rr.ran, err
			}
		}
		rr.p.Add(1)
		if stop {
			rr.ran.Why = StopDecided
			break
		}
	}
	// The rounds planned are those that ran once they stop short.
	rr.p.Plan(rr.ran.Rounds, "rounds")
	rr.ran.Elapsed = time.Since(rr.start)
	return rr.results(), rr.ran, nil
}

// fits says whether one more round fits in budget after done rounds in
// elapsed, sinceFirst of it after the first: a round is expected to take
// as long as those after the first did on average (the first loads what
// later ones reuse), or as the first when it is all there is. A round
// the budget cannot hold does not start.
func fits(done int, elapsed, sinceFirst, budget time.Duration) bool {
	per := elapsed
	if done > 1 {
		per = sinceFirst / time.Duration(done-1)
	}
	return elapsed+per <= budget
}

// roundsRun is one call of Rounds: the targets' requests as prepared,
// their trials so far, how the rounds' trials share the machine, and how
// the rounds went.
type roundsRun struct {
	targets  []Target
	spec     Spec
	plan     Plan
	rounds   int
	prepared []runner.Request
	sets     []*trialSet
	// every says each scenario runs in every round, not only up to its
	// own trials: the rounds are fixed (spec.Trials) or a look decides
	// how many.
	every  bool
	sliced bool // a round's two trials take turns in slices
	jobs   int  // how many of a round's trials run at once
	p      *progress.Reporter
	start  time.Time
	ran    Ran
}

// slot is a trial's place in the rounds: its round, its place in the
// round's order, its target's index.
type slot struct{ round, place, target int }

// prepareRounds prepares each target's request of spec once; a target's
// tracers are verified once for all its rounds (runner.Loads, closed by
// close).
func prepareRounds(targets []Target, spec Spec, plan Plan) (*roundsRun, error) {
	rr := &roundsRun{
		targets: targets, spec: spec, plan: plan, rounds: max(plan.Rounds, 1),
		every: spec.Trials > 0 || plan.Look != nil, ran: Ran{Why: StopRounds}, jobs: 1,
	}
	for _, t := range targets {
		req, err := t.Prepare(spec.request(t.Name()))
		if err != nil {
			return rr, err
		}
		req.Loads = runner.NewLoads()
		rr.prepared = append(rr.prepared, req)
		rr.sets = append(rr.sets, newTrialSet(t.Name()))
	}
	return rr, nil
}

// close lets go of the tracers loaded for the rounds, the last target's
// first.
func (rr *roundsRun) close() {
	for i := len(rr.prepared) - 1; i >= 0; i-- {
		rr.prepared[i].Loads.Close()
	}
}

// results is each target's trials so far.
func (rr *roundsRun) results() []*result.Result {
	out := make([]*result.Result, len(rr.targets))
	for i, s := range rr.sets {
		out[i] = s.result()
	}
	return out
}

// chooseWay decides, and says, how a round's trials share the machine:
// in slices where the plan asks and the targets can (Interleaves), at
// once where it asks and every target is Independent (AtOnce), else one
// after the other.
func (rr *roundsRun) chooseWay() {
	if rr.plan.Slice > 0 {
		if rr.ran.Whole = Interleaves(rr.targets, rr.prepared); rr.ran.Whole == "" {
			line := fmt.Sprintf("each round's trials take turns in slices of %s", rr.plan.Slice)
			for _, t := range rr.targets {
				if tt, ok := t.(Turner); ok && tt.Turns() != "" {
					line += fmt.Sprintf("; %s are written as each of its runs of slices starts and put back as it ends", tt.Turns())
				}
			}
			rr.p.Line(line)
		} else {
			rr.p.Line("each round's trials run whole, one after the other: " + rr.ran.Whole)
		}
	}
	rr.sliced = rr.plan.Slice > 0 && rr.ran.Whole == ""
	if rr.plan.Jobs > 1 && !rr.sliced {
		if why := AtOnce(rr.targets); why == "" {
			rr.jobs = rr.plan.Jobs
			rr.p.Line(fmt.Sprintf("each round's trials run at once, up to %d: their clocks count their own instructions", rr.jobs))
		} else {
			rr.p.Line("each round's trials run one after the other: " + why)
		}
	}
}

// round runs round r: every target's trial, in the plan's order.
func (rr *roundsRun) round(ctx context.Context, r int) error {
	order := Alternate(r, len(rr.targets))
	if rr.plan.Order != nil {
		order = rr.plan.Order(r)
	}
	var offset *int
	if rr.plan.CPUOffset != nil {
		o := rr.plan.CPUOffset(r)
		offset = &o
	}
	if rr.sliced {
		return rr.slicedRound(ctx, r, order, offset)
	}
	return rr.wholeRound(ctx, r, order, offset)
}

// request is the trial of slot s, pinned from offset, seeded with its
// round (every target's trial of round r draws seed r where trials are
// seeded: common random numbers), its progress shown as the round's and
// its target's ("round 3, head").
func (rr *roundsRun) request(s slot, offset *int) runner.Request {
	keep := func(sc *scenarios.Scenario) bool { return rr.every || scenarioTrials(rr.spec, sc) >= s.round }
	req := oneTrial(rr.prepared[s.target], keep)
	req.CPUOffset, req.Seed = offset, uint64(s.round)
	label := rr.label(s)
	gated := gatedOf(req.Scenarios)
	req.Progress = func(e runner.Event) { stepProgress(rr.p, label, e.Scenario, e, gated) }
	return req
}

// label names slot s's trial for progress: "round 3, head".
func (rr *roundsRun) label(s slot) string {
	return fmt.Sprintf("round %d, %s", s.round, rr.targets[s.target].Name())
}

// slicedRound runs round r's two trials interleaved in slices
// (runner.RunPair), the order's first side first.
func (rr *roundsRun) slicedRound(ctx context.Context, r int, order []int, offset *int) error {
	label := fmt.Sprintf("round %d, %s and %s in slices", r, rr.targets[order[0]].Name(), rr.targets[order[1]].Name())
	var reqs [2]runner.Request
	var stamps [2]func(*result.Result)
	for k, ti := range order {
		reqs[ti], stamps[ti], _ = rr.targets[ti].(Interleaver).Interleave(rr.request(slot{r, k, ti}, offset))
	}
	pair, err := runner.RunPair(ctx, reqs, order[0], rr.plan.Slice)
	for attempt := 1; attempt <= rr.plan.Retries && retryable(ctx, err); attempt++ {
		rr.p.Line(fmt.Sprintf("%s: %v; retrying the round (%d/%d)", label, err, attempt, rr.plan.Retries))
		pair, err = runner.RunPair(ctx, reqs, order[0], rr.plan.Slice)
	}
	for k, ti := range order {
		stamps[ti](pair[ti])
		if kerr := rr.keep(ctx, slot{r, k, ti}, pair[ti], reqs[ti], err); kerr != nil {
			return kerr
		}
	}
	return nil
}

// trialRun is what one whole trial of a round gave.
type trialRun struct {
	res *result.Result
	req runner.Request
	err error
}

// wholeRound runs round r's trials whole, one after the other or, with
// jobs, up to jobs at once, keeping each in the order's turn.
func (rr *roundsRun) wholeRound(ctx context.Context, r int, order []int, offset *int) error {
	trials := make([]trialRun, len(order))
	if rr.jobs > 1 {
		var wg sync.WaitGroup
		slots := make(chan struct{}, rr.jobs)
		for k, ti := range order {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				trials[k] = rr.wholeTrial(ctx, slot{r, k, ti}, offset)
			})
		}
		wg.Wait()
	}
	for k, ti := range order {
		if rr.jobs <= 1 {
			trials[k] = rr.wholeTrial(ctx, slot{r, k, ti}, offset)
		}
		tr := trials[k]
		if kerr := rr.keep(ctx, slot{r, k, ti}, tr.res, tr.req, tr.err); kerr != nil {
			return kerr
		}
	}
	return nil
}

// wholeTrial runs the trial of slot s on its target, again as the plan's
// retries allow when it broke.
func (rr *roundsRun) wholeTrial(ctx context.Context, s slot, offset *int) trialRun {
	t := rr.targets[s.target]
	label := rr.label(s)
	req := rr.request(s, offset)
	if b, ok := t.(Booter); ok {
		rr.p.Status(label + ": booting " + b.Booting())
	}
	res, err := t.Run(ctx, req, rr.p)
	for attempt := 1; attempt <= rr.plan.Retries && retryable(ctx, err); attempt++ {
		rr.p.Line(fmt.Sprintf("%s: %v; retrying the round (%d/%d)", label, err, attempt, rr.plan.Retries))
		res, err = t.Run(ctx, req, rr.p)
	}
	return trialRun{res, req, err}
}

// keep adds the trials of slot s (res, which ran req) to its target's;
// err, the trial's, or a failure to add them ends the rounds.
func (rr *roundsRun) keep(ctx context.Context, s slot, res *result.Result, req runner.Request, err error) error {
	t := rr.targets[s.target]
	if err == nil && res != nil && len(res.Scenarios) > 0 {
		if rr.plan.Order != nil {
			// Only a random order within rounds makes a round's
			// trials a pair the sign-flip test may rely on.
			stampRound(res, s.round, s.place)
		}
		if aerr := rr.sets[s.target].add(fmt.Sprintf("%s round %d", t.Name(), s.round), res, req.Scenarios); aerr != nil {
			return Infra(aerr)
		}
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil {
		return nil
	}
	var rf *RestoreError
	switch {
	case errors.As(err, &rf):
		return Infra(err)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return Infra(fmt.Errorf("interrupted in round %d/%d on %s; sysctls restored, tracers detached, no VM left running", s.round, rr.rounds, t.Name()))
	}
	return fmt.Errorf("round %d/%d on %s: %w", s.round, rr.rounds, t.Name(), Classify(err))
}

// scenarioTrials is the trials s asks for under spec.
func scenarioTrials(spec Spec, s *scenarios.Scenario) int {
	return spec.Resolve(s).Trials
}

// stampRound records on every trial of res the round it ran in and its
// place in the round's order: what pairs base's and head's trials.
func stampRound(res *result.Result, round, slot int) {
	for i := range res.Scenarios {
		for _, m := range res.Scenarios[i].Metrics {
			if m == nil {
				continue
			}
			for j := range m.Trials {
				m.Trials[j].Round, m.Trials[j].Slot = round, slot
			}
		}
	}
}
