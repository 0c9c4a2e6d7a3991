package render

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/report")

// goldenDir is the repository's testdata, shared with other packages.
var goldenDir = filepath.Join("..", "..", "testdata", "report")

// checkGolden compares got with testdata/report/name.golden, writing
// name.got beside it on a mismatch (or the golden itself with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name+".golden")
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	gotPath := filepath.Join(goldenDir, name+".got")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		os.WriteFile(gotPath, got, 0o644)
		t.Errorf("%s differs from %s (-want +got), written to %s:\n%s", name, path, gotPath, diff)
		return
	}
	os.Remove(gotPath)
}

// sampleReport holds one verdict of every kind and every kind of warning,
// built by hand so that the renderers' goldens do not move with the
// statistics; each is one the judge could give (TestFixturesArePossible).
func sampleReport() *report.Report {
	return &report.Report{
		Base: report.Side{Target: "host", KernelRelease: "6.1.0-28-amd64"},
		Cand: report.Side{Target: "debian-6.12", KernelRelease: "6.12.9-amd64", Accel: "kvm"},
		Warnings: []stats.Warning{
			{Kind: report.WarnEnvironment, Field: stats.FieldKernelRelease, Base: "6.1.0-28-amd64", Cand: "6.12.9-amd64"},
		},
		Scenarios: []report.ScenarioReport{
			{
				Name: "pipe-pingpong",
				Verdicts: []stats.Verdict{
					{Metric: "sched.wakeup", Quantile: "p50", Base: 2950, Cand: 3012, Ratio: 1.021, Lo: 0.998, Hi: 1.043, Threshold: 0.05, Gated: true, Kind: stats.NoChange, BaseTrials: 5, CandTrials: 5},
					{Metric: "sched.wakeup", Quantile: "p90", Base: 8190, Cand: 9120, Ratio: 1.1135, Lo: 0.991, Hi: 1.22, Threshold: 0.10, Gated: true, Kind: stats.Inconclusive, TrialsToSettle: 12, BaseTrials: 5, CandTrials: 5,
						Warnings: []stats.Warning{{Kind: stats.WarnFewTailEvents, Side: stats.Baseline, Percentile: "p90", BaseCount: 12, CandCount: 810}}},
					{Metric: "sched.wakeup", Quantile: "p99", Base: 41500, Cand: 52300, Ratio: 1.2602, Lo: 1.181, Hi: 1.342, Threshold: 0.10, Gated: true, Kind: stats.Regression, BaseTrials: 5, CandTrials: 5},
					{Metric: "sched.wakeup", Quantile: "p99.9", Base: 1.2e6, Cand: 0.81e6, Ratio: 0.675, Lo: 0.6, Hi: 0.74, Threshold: 0.25, Gated: true, Kind: stats.Improvement, BaseTrials: 5, CandTrials: 5},
					{Metric: "sched.wakeup", Quantile: "max", Base: 3.4e9, Cand: 2.1e9, Ratio: 0.6176, Lo: 0.2, Hi: 1.9, Kind: stats.NotGated, BaseTrials: 5, CandTrials: 5},
				},
				Warnings: []stats.Warning{{Kind: report.WarnMetricOneSide, Side: stats.Baseline, Metric: "syscall.write"}},
			},
			{
				Name: "getppid",
				Verdicts: []stats.Verdict{
					{Metric: "syscall.getppid", Quantile: "p99", Base: 640, Cand: 655, Ratio: 1.0234, Lo: 0.99, Hi: 1.057, Threshold: 0.08, Gated: true, Kind: stats.NoChange, BaseTrials: 1, CandTrials: 1,
						Warnings: []stats.Warning{{Kind: stats.WarnOneTrial, Side: stats.Both}}},
				},
			},
		},
	}
}

func TestRenderGolden(t *testing.T) {
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteReport(&b, sampleReport(), f); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, string(f), b.Bytes())
		})
	}
}

func TestHeadline(t *testing.T) {
	for _, c := range []struct {
		name  string
		kinds []stats.Kind
		want  string
	}{
		{"none", []stats.Kind{stats.NoChange, stats.NoChange}, "No regressions in 2 gated percentiles."},
		{"one", []stats.Kind{stats.Regression}, "1 regression in 1 gated percentile."},
		{"mixed", []stats.Kind{stats.Regression, stats.Regression, stats.Inconclusive, stats.Improvement, stats.NoChange, stats.NotGated}, "2 regressions in 5 gated percentiles (1 inconclusive, 1 improvement)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s report.ScenarioReport
			for _, k := range c.kinds {
				s.Verdicts = append(s.Verdicts, stats.Verdict{Kind: k, Gated: k != stats.NotGated})
			}
			r := &report.Report{Scenarios: []report.ScenarioReport{s}}
			if got := headline(r); got != c.want {
				t.Errorf("Headline() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestFormatNs(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{0, "0ns"}, {850, "850ns"}, {999.4, "999ns"}, {999.6, "1.00µs"}, {1234, "1.23µs"},
		{12345, "12.3µs"}, {123456, "123µs"}, {999_700, "1.00ms"}, {4_560_000, "4.56ms"},
		{1.2e9, "1.20s"}, {75e9, "75.0s"}, {math.NaN(), "-"},
	} {
		if got := FormatNs(c.ns); got != c.want {
			t.Errorf("FormatNs(%g) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestFormatDelta(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		want  string
	}{
		{1, "0.0%"}, {1.0004, "0.0%"}, {1.123, "+12.3%"}, {0.5, "-50.0%"}, {9.99, "+899.0%"},
		{10, "×10"}, {14.23, "×14.2"}, {1.4e22, "×1.4e+22"}, {math.Inf(1), "-"}, {math.NaN(), "-"},
	} {
		if got := FormatDelta(c.ratio); got != c.want {
			t.Errorf("FormatDelta(%g) = %q, want %q", c.ratio, got, c.want)
		}
	}
	if got := FormatCI(0.2, 1.4e22); got != "[-80.0%, ×1.4e+22]" {
		t.Errorf("a two-trial interval: %q", got)
	}
}

func TestNoiseGolden(t *testing.T) {
	r := sampleReport()
	var b bytes.Buffer
	if err := WriteNoiseText(&b, NoiseFloor(r)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "noise", b.Bytes())
}
