package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report"
)

// StoredGate gates one run, or a Result made earlier, against the
// baselines of a Store: a gate across jobs, where PairGate is one within
// a job.
type StoredGate struct {
	Store Store
	// Save stores the run as the baseline of the scenarios that have none,
	// and refreshes the others when the gate passes (Store.Save).
	Save bool
	// Options are the comparison's; Strict fails an inconclusive verdict.
	Options report.Options
	Strict  bool
	// Progress is how the run's progress shows: progress.Verbose for -v.
	Progress progress.Mode
}

// MissingError is scenarios without a stored baseline for a target, found
// before the run that a gate which does not save could not judge.
type MissingError struct {
	Scenarios []string
	Target    string
	Path      string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("no baseline for %s on %s in %s", strings.Join(e.Scenarios, ", "), e.Target, e.Path)
}

// tellUnreachable says before the run, in one line each, every gated test
// whose threshold lies inside the nuisance band the stored baselines'
// seeded boots show (virtual time): the run cannot decide it.
func (g StoredGate) tellUnreachable(spec Spec, target string) {
	for _, sc := range spec.Scenarios {
		e, err := baseline.Load(g.Store.Path, sc.Name, target, "")
		if err != nil {
			continue
		}
		for _, l := range report.SeedBands([]*result.Result{e.Result}, g.Options.Thresholds) {
			if l.Unreachable() {
				fmt.Fprintf(g.Store.Log, "gate: %s %s %s: unreachable: its threshold %g%% is inside the nuisance band its baseline shows (±%.1f%% across %d seeds), so it is never decided either way (docs/vms.md)\n",
					l.Scenario, l.Metric, l.Percentile, 100*l.Threshold, 100*l.Band.Fraction(), l.Band.Seeds)
			}
		}
	}
}

// RunOne is Run of the one target of targets, once its trials were found
// to fit maxTime (CheckTime) and the sysctls a killed run left were put
// back (RecoverSysctls); names are the scenarios as the command line
// named them, for the command that stores a missing baseline.
func (g StoredGate) RunOne(ctx context.Context, targets []Target, spec Spec, output string, maxTime time.Duration, names []string) (*result.Result, error) {
	if len(targets) > 1 {
		return nil, Inputf("gate runs one target at a time (got %d); for several, run each with --shard or per job and gate each Result with --candidate", len(targets))
	}
	if err := CheckTime(spec.TrialsTime(spec.Scenarios), maxTime, "the trials and warmups of "+english.Count(len(spec.Scenarios), "scenario")); err != nil {
		return nil, err
	}
	RecoverSysctls(sysctl.Root, g.Store.Log)
	res, err := g.Run(ctx, targets[0], spec, output)
	if me := (*MissingError)(nil); errors.As(err, &me) {
		return nil, Inputf("%v; create one with: tailgate gate %s--baseline %s --save-baseline", me, ShellArgs(names), me.Path)
	}
	return res, err
}

// Run checks that every scenario of spec has a baseline for t unless the
// gate saves (a *MissingError inside an InputError), runs spec on t with
// its progress on the store's Log, and writes the Result to output (""
// none, StdoutPath the Log, since standard output carries the report).
func (g StoredGate) Run(ctx context.Context, t Target, spec Spec, output string) (*result.Result, error) {
	log := g.Store.Log
	// Checked before minutes are spent on the run. The kernel release is
	// not known yet: any baseline stored for the target will do here.
	missing, err := g.Store.Missing(spec.Scenarios, t.Name())
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 && !g.Save {
		return nil, &InputError{&MissingError{Scenarios: missing, Target: t.Name(), Path: g.Store.Path}}
	}
	clock, err := ClockOf(t)
	if err != nil {
		return nil, err
	}
	if err := g.Store.CheckClock(spec.Scenarios, t.Name(), clock); err != nil {
		return nil, err
	}
	g.tellUnreachable(spec, t.Name())
	p := progress.New(log, progress.Options{Mode: g.Progress})
	res, err := Run(ctx, t, spec, p)
	p.End()
	if errors.Is(err, context.Canceled) {
		return nil, Infra(errors.New("interrupted; nothing compared"))
	}
	if err != nil {
		return nil, Classify(err)
	}
	if output != "" {
		if err := WriteResult(output, res, log); err != nil {
			return nil, Infra(fmt.Errorf("write result: %w", err))
		}
		fmt.Fprintf(log, "result written to %s\n", DescribeOutput(output))
	}
	return res, nil
}

// Judgement is a stored gate's comparison of a run with its baselines,
// before the run is kept.
type Judgement struct {
	// Matrix is the comparison; nil when no scenario of the run had a
	// baseline.
	Matrix  *report.Matrix
	g       StoredGate
	res     *result.Result
	missing []string // the run's scenarios without a baseline
}

// Judge compares res with its stored baselines (Store.Compare). Keep the
// Judgement once its Matrix is written: a report goes out before the
// store changes.
func (g StoredGate) Judge(ctx context.Context, res *result.Result) (*Judgement, error) {
	if err := CheckCandidate(res); err != nil {
		return nil, err
	}
	type compared struct {
		rep     *report.Report
		missing []string
	}
	c, err := Interruptibly(ctx, func() (compared, error) {
		rep, missing, err := g.Store.Compare(res, g.Options)
		return compared{rep, missing}, err
	})
	if errors.Is(err, context.Canceled) {
		return nil, Infra(errors.New("interrupted; nothing compared"))
	}
	if err != nil {
		return nil, err
	}
	j := &Judgement{g: g, res: res, missing: c.missing}
	if c.rep != nil {
		j.Matrix = c.rep.Matrix()
	}
	return j, nil
}

// Keep saves the run as the gate's Save says (Store.Save: a failed gate
// refreshes no baseline). Without Save, a scenario with no baseline is an
// InputError: stored for another target only, it was found before the
// run under the name the run did not report.
func (j *Judgement) Keep(ctx context.Context) error {
	g, res := j.g, j.res
	if g.Save {
		return g.Store.Save(ctx, res, j.missing, j.Matrix != nil && j.Matrix.Failed(g.Strict))
	}
	if len(j.missing) > 0 {
		return Inputf("no baseline for %s on %s (kernel %s) in %s; create one with --save-baseline",
			strings.Join(j.missing, ", "), res.Target.Name, res.Environment.KernelRelease, g.Store.Path)
	}
	return nil
}

// Interruptibly returns what f returns, or context.Canceled as soon as
// ctx is done (an interrupt, a SIGTERM): for work that does not look at
// ctx itself, as a bootstrap. f goes on to its end meanwhile, unseen; a
// command returns, and its process exits.
func Interruptibly[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type out struct {
		v   T
		err error
	}
	done := make(chan out, 1)
	go func() {
		v, err := f()
		done <- out{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
		var zero T
		return zero, context.Canceled
	}
}

// CheckCandidate refuses a candidate with no scenario measured (none, or
// only scenarios the run skipped): a broken run, an InfraError, never a
// pass of nothing.
func CheckCandidate(cand *result.Result) error {
	if len(cand.Scenarios) > 0 {
		return nil
	}
	why := "it has no scenarios"
	if len(cand.Skipped) > 0 {
		var names []string
		for _, sk := range cand.Skipped {
			names = append(names, sk.Scenario)
		}
		why = "its run skipped every scenario (" + strings.Join(names, ", ") + ")"
	}
	return Infra(fmt.Errorf("%w: %s: nothing to gate; the candidate's run is broken", report.ErrCandidateIncomplete, why))
}

// LoadBase reads what cand is compared with: the baselines of its
// scenarios in the directory path (Store.For; each scenario without one
// is named on log and left out), or the Result file path. candPath names
// cand in errors. A base that cannot be read or holds nothing to compare
// with (it would pass every gate) is an InputError.
func LoadBase(path string, cand *result.Result, candPath string, log io.Writer) (*result.Result, error) {
	if err := CheckCandidate(cand); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		base, missing, err := Store{Path: path}.For(cand)
		if err != nil {
			return nil, err
		}
		for _, m := range missing {
			fmt.Fprintf(log, "tailgate compare: no baseline for scenario %s on %s in %s; not compared\n", m, cand.Target.Name, path)
		}
		if base == nil {
			return nil, Inputf("no baseline in %s for any scenario of %s", path, candPath)
		}
		return base, nil
	}
	base, err := result.Load(path)
	if err != nil {
		return nil, Inputf("baseline: %w", err)
	}
	if err := baseline.Check(base); err != nil {
		return nil, Inputf("baseline %s: %w", path, err)
	}
	if err := checkStored(base); err != nil {
		return nil, Inputf("baseline %s: %w", path, err)
	}
	return base, nil
}
