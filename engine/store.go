package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// Store is where a gate's stored baselines and their calibrations are: a
// directory of one file per scenario and target, or a single Result file.
type Store struct {
	Path string
	// Log receives what was written and why something was not.
	Log io.Writer
}

// SingleFile reports whether the store is one Result file: an existing
// regular file, or a path ending in .json that does not exist yet.
func (s Store) SingleFile() bool {
	st, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return strings.HasSuffix(s.Path, ".json")
	}
	return err == nil && !st.IsDir()
}

// Missing returns the scenarios of ss with no baseline for target, of any
// kernel: what a gate checks before spending minutes on the run.
func (s Store) Missing(ss []*scenarios.Scenario, target string) ([]string, error) {
	var missing []string
	for _, sc := range ss {
		e, err := baseline.Load(s.Path, sc.Name, target, "")
		switch {
		case errors.Is(err, baseline.ErrNotFound):
			missing = append(missing, sc.Name)
		case err != nil:
			return nil, &InputError{fmt.Errorf("baseline: %w", err)}
		default:
			if err := checkStored(e.Result); err != nil {
				return nil, &InputError{fmt.Errorf("baseline %s: %w", e.Path, err)}
			}
		}
	}
	return missing, nil
}

// CheckClock refuses, before a run on clock, the baselines of ss for
// target that ran on another clock (of any kernel, as Missing finds
// them): the comparison that follows the run would be refused.
func (s Store) CheckClock(ss []*scenarios.Scenario, target string, clock vm.Clock) error {
	for _, sc := range ss {
		e, err := baseline.Load(s.Path, sc.Name, target, "")
		if err != nil {
			continue // Missing has said what is wrong
		}
		if e.Result.Target.Virtual() != clock.Virtual() {
			have := e.Result.Target.ClockOf()
			return Inputf("the baseline of %s on %s in %s ran in %s time and this run is in %s time: one comparison takes one clock; give --clock %s, or save a baseline in %s time", sc.Name, target, s.Path, have, clock, have, clock)
		}
	}
	return nil
}

// For gathers the baseline of every scenario of cand into one Result.
// Scenarios without a baseline are returned by name; an unreadable
// baseline is an InputError.
func (s Store) For(cand *result.Result) (*result.Result, []string, error) {
	var base *result.Result
	var missing []string
	for _, sc := range cand.Scenarios {
		e, err := baseline.Load(s.Path, sc.Name, cand.Target.Name, cand.Environment.KernelRelease)
		if errors.Is(err, baseline.ErrNotFound) {
			missing = append(missing, sc.Name)
			continue
		}
		if err != nil {
			return nil, nil, &InputError{fmt.Errorf("baseline: %w", err)}
		}
		if err := checkStored(e.Result); err != nil {
			return nil, nil, &InputError{fmt.Errorf("baseline %s: %w", e.Path, err)}
		}
		if base == nil {
			base = e.Result
			continue
		}
		base.Scenarios = append(base.Scenarios, *e.Scenario())
	}
	return base, missing, nil
}

// Compare compares cand with its stored baselines (For), leaving out and
// returning by name the scenarios without one; the Report is nil when no
// scenario has one. A stored baseline is another run: its interval takes
// the between-run spread that calibrate stored (LoadCalibration), and
// says so without.
func (s Store) Compare(cand *result.Result, o report.Options) (*report.Report, []string, error) {
	base, missing, err := s.For(cand)
	if err != nil || base == nil {
		return nil, missing, err
	}
	c := *cand
	c.Scenarios = slices.DeleteFunc(slices.Clone(cand.Scenarios), func(sc result.Scenario) bool {
		return slices.Contains(missing, sc.Name)
	})
	o.Stored = true
	if o.Calibration, err = s.LoadCalibration(base.Target.Name, base.Environment.KernelRelease); err != nil {
		return nil, nil, err
	}
	rep, err := report.Compare(base, &c, o)
	if err != nil {
		return nil, nil, CompareError(err)
	}
	return rep, missing, nil
}

// Save stores res as the baseline: every scenario when the gate passed,
// only the scenarios that had none (missing) when it failed, so that a
// regression never becomes the new normal.
func (s Store) Save(ctx context.Context, res *result.Result, missing []string, failed bool) (err error) {
	toSave := *res
	if failed {
		toSave.Scenarios = slices.DeleteFunc(slices.Clone(res.Scenarios), func(sc result.Scenario) bool {
			return !slices.Contains(missing, sc.Name)
		})
		fmt.Fprintf(s.Log, "gate failed: existing baselines not refreshed\n")
	}
	if len(toSave.Scenarios) == 0 {
		return nil
	}
	if err := report.CheckBaseline(&toSave); err != nil && baseline.Check(&toSave) == nil {
		return &InputError{fmt.Errorf("%w: %w", baseline.ErrRefused, err)}
	}
	defer func() {
		if err == nil {
			for _, m := range missing {
				fmt.Fprintf(s.Log, "no baseline for scenario %s on %s: this run is saved as its baseline\n", m, res.Target.Name)
			}
		}
	}()
	if s.SingleFile() {
		if failed {
			// One file holds every scenario; rewriting it would refresh the
			// ones that regressed.
			fmt.Fprintf(s.Log, "baseline %s not updated: it is a single file and the gate failed\n", s.Path)
			return nil
		}
		if _, err := os.Stat(s.Path); err == nil {
			old, err := result.Load(s.Path)
			if err != nil {
				return &InputError{fmt.Errorf("refusing to replace unreadable baseline: %w", err)}
			}
			// One file has one environment: scenarios of another run cannot
			// be kept beside this one's, and dropping them would lose them.
			var lost []string
			for _, sc := range old.Scenarios {
				if res.Find(sc.Name) == nil {
					lost = append(lost, sc.Name)
				}
			}
			if len(lost) > 0 {
				return Inputf("baseline %s also holds %s, which this run did not measure; not replaced. Use a baseline directory to keep scenarios apart", s.Path, strings.Join(lost, ", "))
			}
		}
		if err := result.Write(s.Path, res); err != nil {
			return Infra(fmt.Errorf("write baseline: %w", err))
		}
		fmt.Fprintf(s.Log, "baseline written to %s\n", s.Path)
		return nil
	}
	return SaveBaselines(ctx, s.Path, &toSave, baseline.SaveOptions{}, s.Log)
}

// ShowBaselines writes the baselines stored at path (a directory, or one
// Result file) to w, as JSON (docs/baselines.schema.json) when json is
// set, else as text within width. The readable ones are written; any
// that does not read is an InputError, after them.
func ShowBaselines(path string, json bool, w io.Writer, width int) error {
	entries, listErr := baseline.List(path)
	if listErr != nil && len(entries) == 0 {
		return &InputError{listErr}
	}
	if len(entries) == 0 && listErr == nil && !json {
		fmt.Fprintf(w, "no baselines in %s\n", path)
		return nil
	}
	write := baseline.WriteSummaryJSON
	if !json {
		write = func(w io.Writer, entries []baseline.Entry) error {
			return render.WriteBaselines(w, entries, render.TextOptions{Width: width})
		}
	}
	if err := write(w, entries); err != nil {
		return err
	}
	if listErr != nil {
		return &InputError{listErr}
	}
	return nil
}

// SaveBaselines stores each scenario of r as its own baseline file in dir,
// saying on log what it wrote and when it waits for another tailgate
// saving into the same store. A store tailgate refuses to overwrite is an
// InputError, a failed write an InfraError.
func SaveBaselines(ctx context.Context, dir string, r *result.Result, opt baseline.SaveOptions, log io.Writer) error {
	opt.Waiting = func(l baseline.LockWait) {
		wait := opt.Wait
		if wait <= 0 {
			wait = safefile.DefaultLockWait
		}
		fmt.Fprintf(log, "baseline store %s is locked by %s; waiting for %s at most %v (Ctrl-C stops)\n", filepath.Dir(l.Lock), l.Holder, l.Lock, wait)
	}
	// A Result without measurements is baseline.SaveWith's to name.
	if err := report.CheckBaseline(r); err != nil && baseline.Check(r) == nil {
		return &InputError{fmt.Errorf("%w: %w", baseline.ErrRefused, err)}
	}
	paths, err := baseline.SaveWith(ctx, dir, r, opt)
	for _, p := range paths {
		fmt.Fprintf(log, "baseline written to %s\n", p)
	}
	if errors.Is(err, result.ErrCorrupt) || errors.Is(err, result.ErrFutureSchema) || errors.Is(err, result.ErrTooLarge) || errors.Is(err, baseline.ErrRefused) || errors.Is(err, baseline.ErrNotStore) ||
		errors.Is(err, baseline.ErrLink) || errors.Is(err, safefile.ErrPlantedLink) {
		return &InputError{err}
	}
	return Infra(err)
}

// CalibrationPath is where the calibration of target on kernel is stored:
// a file in DIR/calibration/ for a baseline directory (not a .json of the
// directory itself, which would read as a baseline), FILE.calibration.json
// beside a single baseline FILE.
func (s Store) CalibrationPath(target, kernel string) string {
	if s.SingleFile() {
		return strings.TrimSuffix(s.Path, ".json") + ".calibration.json"
	}
	name := strings.TrimSuffix(baseline.FileName("calibration", target, kernel), ".json")
	return filepath.Join(s.Path, "calibration", strings.TrimPrefix(name, "calibration@")+".json")
}

// CalibrationWritable is a path whose directory must be writable for a
// calibration to be stored ("" when there is no store).
func (s Store) CalibrationWritable() string {
	if s.Path == "" {
		return ""
	}
	if s.SingleFile() {
		return s.CalibrationPath("", "")
	}
	if _, err := os.Stat(s.Path); err != nil {
		return filepath.Join(s.Path) // a store not made yet: its parent must take it
	}
	return filepath.Join(s.Path, "x")
}

// LoadCalibration reads the calibration stored for target on kernel, or
// nil when none is stored. A file that is there but cannot be read is an
// InputError, never ignored.
func (s Store) LoadCalibration(target, kernel string) (*stats.Calibration, error) {
	path := s.CalibrationPath(target, kernel)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &InputError{fmt.Errorf("calibration %s: %w", path, err)}
	}
	c, err := stats.ParseCalibration(b)
	if err != nil {
		return nil, &InputError{fmt.Errorf("calibration %s: %s: %w", path, path, err)}
	}
	return c, nil
}

// SaveCalibration stores cal where LoadCalibration finds it, and says so
// on Log.
func (s Store) SaveCalibration(cal *stats.Calibration) error {
	path := s.CalibrationPath(cal.Target, cal.KernelRelease)
	if err := safefile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Infra(fmt.Errorf("store calibration: %w", err))
	}
	b, err := stats.MarshalCalibration(cal)
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(path, b); err != nil {
		return Infra(fmt.Errorf("store calibration: %w", err))
	}
	fmt.Fprintf(s.Log, "calibration written to %s\n", path)
	return nil
}

// Calibrate runs spec runs times on t, each run of its own independent
// trials, and measures the spread between runs (stats.Calibrate); p
// shows the trials of all runs, and a line as each run starts. Where
// trials are seeded (virtual time), each run's seeds follow the last's,
// so that no two boots repeat each other.
func Calibrate(ctx context.Context, t Target, spec Spec, runs int, p *progress.Reporter) (*stats.Calibration, []*result.Result, error) {
	var all []*result.Result
	defer p.End()
	p.Plan(runs*plannedTrials(spec.request(t.Name())), "trials")
	for i := range runs {
		p.Line(fmt.Sprintf("calibrate: run %d of %d on %s", i+1, runs, t.Name()))
		spec.Seed = uint64(i*PlannedRounds(spec)) + 1
		res, err := Run(ctx, t, spec, p)
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil, nil, Infra(errors.New("interrupted; nothing stored"))
		}
		if err != nil {
			return nil, nil, Classify(err)
		}
		all = append(all, res)
	}
	cal, err := report.Calibrate(all)
	if err != nil {
		return nil, nil, Infra(err)
	}
	return cal, all, nil
}
