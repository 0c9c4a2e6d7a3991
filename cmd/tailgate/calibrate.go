package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
)

const calibrateUsage = `usage: tailgate calibrate [SCENARIO...] [--runs K] [--baseline DIR|FILE] [--kernel SPEC | --target NAME | --vm] [--trials N] [--duration D]

Measures how much separate runs of the same code differ on this target: K
runs (default 3), each of its own independent trials (worker processes, or
boots in a VM), and per gated metric and percentile the spread between runs
beyond what the bootstrap sees inside one run. A gate against a stored
baseline adds that spread to its interval, since the baseline's run and the
candidate's each drew their own run-level offset (another boot, another
day). With --baseline the calibration is stored beside the baselines, where
'tailgate gate --baseline' finds it; without, it is printed only.

The bound stored is an upper 90% confidence bound: with few runs it is wide
(at 3 runs about 2.3 times the measured spread), the honest price of a short
calibration. More runs give a tighter bound.

`

func cmdCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate")
	var rf runFlags
	rf.register(fs)
	var tf targetFlags
	tf.register(fs)
	var f reportFlags
	f.registerThresholds(fs)
	runs := fs.Int("runs", 3, "separate runs to measure the spread between (at least 2)")
	var basePath string
	fs.StringVar(&basePath, "baseline", "", "store the calibration beside the baselines in `DIR` (or beside a baseline FILE)")
	setUsage(fs, stdout, calibrateUsage)
	names, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if *runs < 2 || *runs > 100 {
		return usagef("--runs must be from 2 to 100, got %d", *runs)
	}
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if err := checkThresholdMetrics(f.thresholds, scenarioMetrics(ss)); err != nil {
		return err
	}
	if err := checkOutputPath(calibrationPathOf(basePath)); err != nil {
		return err
	}
	targets, err := tf.targets()
	if err != nil {
		return err
	}
	if len(targets) != 1 {
		return usagef("calibrate measures one target at a time, got %d", len(targets))
	}
	t := targets[0]
	var all []*result.Result
	for i := range *runs {
		fmt.Fprintf(stderr, "calibrate: run %d of %d on %s\n", i+1, *runs, t.name)
		p := progress.New(stderr)
		req, err := rf.request(ss, p)
		if err != nil {
			return err
		}
		req.Target = result.Target{Name: t.name, Kind: "host"}
		res, runErr := execute(ctx, t, &tf, req, p)
		p.Done()
		if errors.Is(runErr, context.Canceled) || ctx.Err() != nil {
			return infra(errors.New("interrupted; nothing stored"))
		}
		if runErr != nil {
			return classify(runErr)
		}
		all = append(all, res)
	}
	cal, err := report.Calibrate(all)
	if err != nil {
		return infra(err)
	}
	if err := writeCalibrationText(stdout, cal, all[0], f.thresholds); err != nil {
		return err
	}
	if basePath == "" {
		fmt.Fprintf(stdout, "Not stored: pass --baseline DIR to store it beside the baselines, where gate --baseline finds it.\n")
		return nil
	}
	path := calibrationPath(basePath, cal.Target, cal.KernelRelease)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return infra(fmt.Errorf("store calibration: %w", err))
	}
	b, err := report.MarshalCalibration(cal)
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(path, b); err != nil {
		return infra(fmt.Errorf("store calibration: %w", err))
	}
	fmt.Fprintf(stderr, "calibration written to %s\n", path)
	return nil
}

// calibrationPath is where the calibration of target on kernel is stored
// for the baselines at basePath: a file in DIR/calibration/ for a baseline
// directory (not a .json of the directory itself, which would read as a
// baseline), FILE.calibration.json beside a single baseline FILE.
func calibrationPath(basePath, target, kernel string) string {
	if singleFile(basePath) {
		return strings.TrimSuffix(basePath, ".json") + ".calibration.json"
	}
	name := strings.TrimSuffix(baseline.FileName("calibration", target, kernel), ".json")
	return filepath.Join(basePath, "calibration", strings.TrimPrefix(name, "calibration@")+".json")
}

// calibrationPathOf is a path whose directory must be writable for a
// calibration to be stored at basePath ("" when none is to be stored).
func calibrationPathOf(basePath string) string {
	if basePath == "" {
		return ""
	}
	if singleFile(basePath) {
		return calibrationPath(basePath, "", "")
	}
	if _, err := os.Stat(basePath); err != nil {
		return filepath.Join(basePath) // a store not made yet: its parent must take it
	}
	return filepath.Join(basePath, "x")
}

// loadCalibration reads the calibration stored for the baselines at
// basePath, or nil when none is stored. A file that is there but cannot be
// read is an error, never ignored.
func loadCalibration(basePath, target, kernel string) (*report.Calibration, error) {
	path := calibrationPath(basePath, target, kernel)
	c, err := report.LoadCalibration(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("calibration %s: %w", path, err)}
	}
	return c, nil
}

// writeCalibrationText prints, per scenario, metric and percentile, the
// spread inside one run, between runs, and the excess a stored-baseline
// comparison adds, for the gated percentiles (the stored calibration has
// every percentile).
func writeCalibrationText(w io.Writer, cal *report.Calibration, first *result.Result, cli []report.Threshold) error {
	fmt.Fprintf(w, "Between-run spread on %s (kernel %s): %d separate runs, nothing changed between them.\n", cal.Target, cal.KernelRelease, cal.Runs)
	t := report.NewTable(w)
	t.Header([]string{"scenario", "metric", "pctl", "gated", "within a run", "between runs", "excess", "excess, 90% bound"})
	pct := func(sd float64) string {
		if math.IsNaN(sd) {
			return "-"
		}
		return fmt.Sprintf("±%.1f%%", 100*(math.Exp(sd)-1))
	}
	for _, s := range first.Scenarios {
		ms := cal.Scenarios[s.Name]
		var names []string
		for n := range ms {
			names = append(names, n)
		}
		slices.Sort(names)
		// The gated tests only: the others are reported, never judged, and
		// their spreads (of sparse sched metrics, say) say little.
		for _, gatedPass := range []bool{true} {
			for _, n := range names {
				for _, p := range report.Percentiles {
					sp, ok := ms[n][p.Name]
					if !ok {
						continue
					}
					_, gated := report.ResolveThreshold(n, p.Name, s.Gate, cli)
					if gated != gatedPass {
						continue
					}
					g := ""
					if gated {
						g = "yes"
					}
					if err := t.Append([]string{s.Name, n, p.Name, g, pct(sp.WithinSD), pct(sp.BetweenSD), pct(sp.ExcessSD), pct(sp.UpperSD)}); err != nil {
						return err
					}
				}
			}
		}
	}
	return t.Render()
}
