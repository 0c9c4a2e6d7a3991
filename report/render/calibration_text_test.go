package render

import (
	"bytes"
	"fmt"
	"github.com/tailgate-ci/tailgate/report"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// calibrationRuns are 3 runs of two real scenarios, each of 20 trials
// drawn from their recorded pools.
func calibrationRuns(t *testing.T) []*result.Result {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	var runs []*result.Result
	for range 3 {
		var run *result.Result
		for _, p := range []struct{ file, metric string }{
			{"trials-syscall-read.json", "syscall.read"},
			{"trials-pipe-pingpong.json", "sched.runq"},
		} {
			pool, err := result.Load(filepath.Join("..", "testdata", p.file))
			if err != nil {
				t.Fatal(err)
			}
			one := statstest.FromPool(r, pool, p.metric, 20, 1)
			if run == nil {
				run = one
			} else {
				run.Scenarios = append(run.Scenarios, one.Scenarios...)
			}
		}
		runs = append(runs, run)
	}
	return runs
}

// TestCalibrationTextWidths: calibrate's report keeps to 100 and 80
// columns with every scenario, metric and bound still there; unlimited,
// its rows are whole.
func TestCalibrationTextWidths(t *testing.T) {
	runs := calibrationRuns(t)
	cal, err := report.Calibrate(runs)
	if err != nil {
		t.Fatal(err)
	}
	var bounds []string
	for _, s := range runs[0].Scenarios {
		for _, p := range stats.PercentilesFor(s.Gate, nil) {
			for m, sp := range cal.Scenarios[s.Name] {
				if x, ok := sp[p.Name]; ok {
					if _, gated := stats.ResolveThreshold(m, p.Name, s.Gate, nil); gated {
						bounds = append(bounds, fmt.Sprintf("±%.1f%%", 100*(math.Exp(x.UpperSD)-1)))
					}
				}
			}
		}
	}
	if len(bounds) == 0 {
		t.Fatal("no gated percentile calibrated")
	}
	for _, width := range []int{100, 80, 0} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCalibrationText(&b, cal, runs[0], nil, TextOptions{Width: width}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			widest := 0
			for _, l := range strings.Split(out, "\n") {
				widest = max(widest, textWidth(l))
			}
			t.Logf("width %d: widest line %d columns", width, widest)
			if width > 0 {
				checkWidth(t, out, width)
			}
			for _, w := range append([]string{"syscall-read", "pipe-pingpong", "syscall.read", "sched.runq", "excess, 90% bound"}, bounds...) {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			whole := strings.Contains(out, "| within a run |")
			if width == 0 && !whole || width == 80 && whole {
				t.Errorf("at %d columns whole rows are %v:\n%s", width, whole, out)
			}
		})
	}
}
