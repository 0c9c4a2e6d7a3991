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

// Rounds runs the interleaved trials of spec on targets as plan says,
// with progress on log. It returns each target's trials (nil for a
// target with none), how the rounds went, and the first error, after
// which no further round starts.
func Rounds(ctx context.Context, targets []Target, spec Spec, plan Plan, log io.Writer) ([]*result.Result, Ran, error) {
	res, ran, err := runRounds(ctx, targets, spec, plan, log)
	// A variant whose sysctls took turns holds them suspended under a
	// journal until here, however the rounds ended.
	for _, t := range targets {
		if r, ok := t.(interface{ Release() error }); ok {
			if rerr := r.Release(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	return res, ran, err
}

func runRounds(ctx context.Context, targets []Target, spec Spec, plan Plan, log io.Writer) ([]*result.Result, Ran, error) {
	rounds := max(plan.Rounds, 1)
	// A scenario runs in the rounds up to its own trials, unless the
	// rounds are fixed (spec.Trials) or a look decides how many.
	every := spec.Trials > 0 || plan.Look != nil
	sets := make([]*trialSet, len(targets))
	prepared := make([]runner.Request, len(targets))
	for i, t := range targets {
		sets[i] = newTrialSet(t.Name())
		req, err := t.Prepare(spec.request(t.Name()))
		if err != nil {
			return make([]*result.Result, len(targets)), Ran{Why: StopRounds}, err
		}
		// A target's tracers are verified once for all its rounds.
		req.Loads = runner.NewLoads()
		defer req.Loads.Close()
		prepared[i] = req
	}
	results := func() []*result.Result {
		out := make([]*result.Result, len(targets))
		for i, s := range sets {
			out[i] = s.result()
		}
		return out
	}
	start := time.Now()
	ran := Ran{Why: StopRounds}
	p := progress.New(log)
	defer p.Done()
	if plan.Slice > 0 {
		if ran.Whole = Interleaves(targets, prepared); ran.Whole == "" {
			line := fmt.Sprintf("each round's trials take turns in slices of %s", plan.Slice)
			for _, t := range targets {
				if v, ok := t.(*Variant); ok && len(v.Sysctls) > 0 {
					line += fmt.Sprintf("; %s's sysctls are written as each of its runs of slices starts and put back as it ends", v.Name())
				}
			}
			p.Line(line)
		} else {
			p.Line("each round's trials run whole, one after the other: " + ran.Whole)
		}
	}
	sliced := plan.Slice > 0 && ran.Whole == ""
	jobs := 1
	if plan.Jobs > 1 && !sliced {
		if why := AtOnce(targets); why == "" {
			jobs = plan.Jobs
			p.Line(fmt.Sprintf("each round's trials run at once, up to %d: their clocks count their own instructions", jobs))
		} else {
			p.Line("each round's trials run one after the other: " + why)
		}
	}
	total := rounds * len(targets)
	for r := 1; r <= rounds; r++ {
		if plan.Budget > 0 && r > 1 && time.Since(start) >= plan.Budget {
			ran.Why = StopBudget
			break
		}
		order := Alternate(r, len(targets))
		if plan.Order != nil {
			order = plan.Order(r)
		}
		var offset *int
		if plan.CPUOffset != nil {
			o := plan.CPUOffset(r)
			offset = &o
		}
		keep := func(s *scenarios.Scenario) bool { return every || scenarioTrials(spec, s) >= r }
		// done is the trials before the round's k'th, for progress.
		done := func(k int) int { return (r-1)*len(targets) + k }
		request := func(k, ti int, label string) runner.Request {
			req := oneTrial(prepared[ti], keep)
			req.CPUOffset = offset
			req.Progress = func(e runner.Event) {
				switch {
				case e.Phase == runner.PhaseAttach || e.Phase == runner.PhaseWarmup:
					p.Step(done(k), total, fmt.Sprintf("%s: %s: %s", label, e.Scenario, e.Phase), "")
				case e.Phase == runner.PhaseTrial && e.Detail != "":
					p.Step(done(k), total, fmt.Sprintf("%s: %s: trial done", label, e.Scenario), e.Detail)
				}
			}
			return req
		}
		// keepRound adds a target's trials of the round; its error ends
		// the rounds.
		keepRound := func(k, ti int, res *result.Result, req runner.Request, err error) error {
			t := targets[ti]
			if err == nil && res != nil && len(res.Scenarios) > 0 {
				if plan.Order != nil {
					// Only a random order within rounds makes a round's
					// trials a pair the sign-flip test may rely on.
					stampRound(res, r, k)
				}
				if aerr := sets[ti].add(fmt.Sprintf("%s round %d", t.Name(), r), res, req.Scenarios); aerr != nil {
					return Infra(aerr)
				}
			}
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				var rf *RestoreError
				switch {
				case errors.As(err, &rf):
					return Infra(err)
				case errors.Is(err, context.Canceled) || ctx.Err() != nil:
					return Infra(fmt.Errorf("interrupted in round %d/%d on %s; sysctls restored, tracers detached, no VM left running", r, rounds, t.Name()))
				}
				return fmt.Errorf("round %d/%d on %s: %w", r, rounds, t.Name(), Classify(err))
			}
			return nil
		}
		if sliced {
			label := fmt.Sprintf("round %d/%d, %s and %s in slices", r, rounds, targets[order[0]].Name(), targets[order[1]].Name())
			var reqs [2]runner.Request
			var stamps [2]func(*result.Result)
			for k, ti := range order {
				reqs[ti], stamps[ti], _ = targets[ti].(Interleaver).Interleave(request(k, ti, label))
			}
			pair, err := runner.RunPair(ctx, reqs, order[0], plan.Slice)
			for attempt := 1; attempt <= plan.Retries && retryable(ctx, err); attempt++ {
				p.Line(fmt.Sprintf("%s: %v; retrying the round (%d/%d)", label, err, attempt, plan.Retries))
				pair, err = runner.RunPair(ctx, reqs, order[0], plan.Slice)
			}
			for k, ti := range order {
				stamps[ti](pair[ti])
				if kerr := keepRound(k, ti, pair[ti], reqs[ti], err); kerr != nil {
					ran.Rounds, ran.Elapsed = r-1, time.Since(start)
					return results(), ran, kerr
				}
			}
		} else {
			type trial struct {
				res *result.Result
				req runner.Request
				err error
			}
			trials := make([]trial, len(order))
			run := func(k, ti int) {
				t := targets[ti]
				label := fmt.Sprintf("round %d/%d, %s", r, rounds, t.Name())
				req := request(k, ti, label)
				if b, ok := t.(interface{ Booting() string }); ok {
					p.Step(done(k), total, label+": booting "+b.Booting(), "")
				}
				res, err := t.Run(ctx, req, p)
				for attempt := 1; attempt <= plan.Retries && retryable(ctx, err); attempt++ {
					p.Line(fmt.Sprintf("%s: %v; retrying the round (%d/%d)", label, err, attempt, plan.Retries))
					res, err = t.Run(ctx, req, p)
				}
				trials[k] = trial{res, req, err}
			}
			if jobs > 1 {
				var wg sync.WaitGroup
				slots := make(chan struct{}, jobs)
				for k, ti := range order {
					wg.Go(func() {
						slots <- struct{}{}
						defer func() { <-slots }()
						run(k, ti)
					})
				}
				wg.Wait()
			}
			for k, ti := range order {
				if jobs <= 1 {
					run(k, ti)
				}
				tr := trials[k]
				if kerr := keepRound(k, ti, tr.res, tr.req, tr.err); kerr != nil {
					ran.Rounds, ran.Elapsed = r-1, time.Since(start)
					return results(), ran, kerr
				}
			}
		}
		ran.Rounds, ran.Elapsed = r, time.Since(start)
		if plan.Look != nil {
			out := results()
			stop, err := plan.Look(r, out)
			if err != nil {
				return out, ran, err
			}
			if stop {
				ran.Why = StopDecided
				return out, ran, nil
			}
		}
	}
	ran.Elapsed = time.Since(start)
	return results(), ran, nil
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
