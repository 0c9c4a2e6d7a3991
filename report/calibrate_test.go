package report_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// Runs with a known run-level offset: the calibration's point estimate
// finds it, its upper bound lies above it, and runs without one give
// (nearly) none.
func TestCalibrate(t *testing.T) {
	for _, c := range []struct {
		name     string
		run      float64
		lo, hi   float64 // for ExcessSD of syscall.read p50
		upperMin float64
	}{
		{"8% run offset", 0.08, 0.04, 0.13, 0.08},
		{"no run offset", 0, 0, 0.03, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := statstest.Noise{Within: 0.02, Run: c.run}
			r := rand.New(rand.NewPCG(11, 12))
			var runs []*result.Result
			for i := range 12 {
				res := statstest.DrawRun(r, n, 10, 2e4, nil, n.Run*r.NormFloat64()).Result("host", 10)
				res.Finished = time.Unix(int64(1000+i), 0)
				runs = append(runs, res)
			}
			cal, err := report.Calibrate(runs)
			if err != nil {
				t.Fatal(err)
			}
			if cal.Runs != 12 || cal.Target != "host" || cal.KernelRelease != "6.1.0" || !cal.Created.Equal(time.Unix(1011, 0)) || cal.Schema != stats.CalibrationSchema {
				t.Errorf("header %+v", cal)
			}
			sp := cal.Scenarios["syscall-read"]["syscall.read"]["p50"]
			t.Logf("%s: between %.4f within %.4f excess %.4f upper %.4f", c.name, sp.BetweenSD, sp.WithinSD, sp.ExcessSD, sp.UpperSD)
			if sp.ExcessSD < c.lo || sp.ExcessSD > c.hi || sp.UpperSD < sp.ExcessSD || sp.UpperSD < c.upperMin || sp.Trials != 10 {
				t.Errorf("spread %+v: want excess in [%g, %g], upper above it and ≥ %g", sp, c.lo, c.hi, c.upperMin)
			}
			if _, ok := cal.Scenarios["syscall-read"]["syscall.read"]["max"]; ok {
				t.Error("max calibrated")
			}
			b, err := stats.MarshalCalibration(cal)
			if err != nil {
				t.Fatal(err)
			}
			back, err := stats.ParseCalibration(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(cal, back); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestCalibrateRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	run := func(target, kernel string) *result.Result {
		res := statstest.DrawRun(r, statstest.Measured, 3, 1e4, nil, 0).Result(target, 3)
		res.Environment.KernelRelease = kernel
		return res
	}
	if _, err := report.Calibrate([]*result.Result{run("host", "6.1")}); !errors.Is(err, stats.ErrTooFewRuns) {
		t.Errorf("one run: %v", err)
	}
	if _, err := report.Calibrate([]*result.Result{run("host", "6.1"), run("vm", "6.1")}); err == nil || !strings.Contains(err.Error(), "one target at a time") {
		t.Errorf("two targets: %v", err)
	}
	if _, err := report.Calibrate([]*result.Result{run("host", "6.1"), run("host", "6.12")}); err == nil || !strings.Contains(err.Error(), "one kernel at a time") {
		t.Errorf("two kernels: %v", err)
	}
	if _, err := stats.ParseCalibration([]byte(`{"schema": 3, "runs": 5}`)); !errors.Is(err, stats.ErrCalibrationSchema) {
		t.Errorf("future schema: %v", err)
	}
	if _, err := stats.ParseCalibration([]byte(`{"schema": 1, "runs": 1}`)); !errors.Is(err, stats.ErrTooFewRuns) {
		t.Errorf("one run: %v", err)
	}
	var c *stats.Calibration
	if _, ok := c.Excess("a", "b", "p99"); ok {
		t.Error("a nil calibration has an excess")
	}
}
