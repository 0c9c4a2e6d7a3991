package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/scenarios"
)

var calibrateUsage = `usage: tailgate calibrate [SCENARIO...] [--runs K] [--baseline DIR|FILE] [--kernel SPEC | --target NAME | --vm] [--trials N] [--duration D]

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

` + helpEnd(exits{"0 calibrated (and stored with --baseline)", exitBadInput, exitInfraAny},
	"tailgate calibrate syscall-read --runs 5 --baseline baselines/",
	"tailgate calibrate timer-1ms --kernel debian:6.1-cloud")

func cmdCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("calibrate")
	var fl commandFlags
	fl.run.register(fs)
	fl.targets.register(fs)
	fl.report.registerThresholds(fs)
	runs := fs.Int("runs", 3, "separate runs to measure the spread between (at least 2)")
	var basePath string
	fs.StringVar(&basePath, "baseline", "", "store the calibration beside the baselines in `DIR` (or beside a baseline FILE)")
	cmdline.SetUsage(fs, stdout, calibrateUsage)
	names, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if *runs < 2 || *runs > 100 {
		return usagef("--runs must be from 2 to 100, got %d", *runs)
	}
	ss, err := engine.LookupScenarios(names)
	if err != nil {
		return err
	}
	if err := engine.CheckThresholds(fl.report.thresholds, scenarios.AllMetrics(ss)); err != nil {
		return err
	}
	store := engine.Store{Path: basePath, Log: stderr}
	if err := engine.CheckOutput(store.CalibrationWritable()); err != nil {
		return err
	}
	targets, err := fl.targets.resolve()
	if err != nil {
		return err
	}
	if len(targets) != 1 {
		return usagef("calibrate measures one target at a time, got %d", len(targets))
	}
	spec := fl.run.spec(ss)
	if err := fl.run.checkTime(time.Duration(*runs)*spec.TrialsTime(ss), fmt.Sprintf("%d runs of the trials and warmups of %s", *runs, english.Count(len(ss), "scenario"))); err != nil {
		return err
	}
	engine.RecoverSysctls(sysctl.Root, stderr)
	cal, all, err := engine.Calibrate(ctx, targets[0], spec, *runs, progress.New(stderr, progress.Options{Mode: fl.run.progressMode()}))
	if err != nil {
		return err
	}
	if err := render.WriteCalibrationText(stdout, cal, all[0], fl.report.thresholds, render.TextOptions{Width: termwidth.Of(stdout)}); err != nil {
		return err
	}
	if err := render.WriteBands(stdout, report.SeedBands(all, fl.report.thresholds), render.TextOptions{Width: termwidth.Of(stdout)}); err != nil {
		return err
	}
	if basePath == "" {
		fmt.Fprintf(stdout, "Not stored: --baseline DIR stores it where gate --baseline finds it.\n")
		return nil
	}
	return store.SaveCalibration(cal)
}
