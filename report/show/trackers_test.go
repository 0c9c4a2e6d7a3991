package show

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/tailgate-ci/tailgate/report"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/perf/benchmath"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// validateSchema checks doc against testdata/schema (see
// testdata/SOURCES.md for where each comes from).
func validateSchema(t *testing.T, schema string, doc []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("testdata", schema))
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("against %s: %v", schema, err)
	}
}

// recorded is a Result of n trials of a recorded run (report/testdata:
// syscall-read's syscall.read, pipe-pingpong's sched.runq, each trial a
// worker process), as 'run --trials n' of it would be.
func recorded(t *testing.T, n int) *result.Result {
	t.Helper()
	var out *result.Result
	for _, f := range []string{"trials-syscall-read.json", "trials-pipe-pingpong.json"} {
		r, err := result.Load(filepath.Join("..", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		s := r.Scenarios[0]
		for _, m := range s.Metrics {
			m.Trials = m.Trials[:n]
		}
		s.Trials = n
		if out == nil {
			out = r
			out.Scenarios = nil
		}
		out.Scenarios = append(out.Scenarios, s)
	}
	return out
}

// truth is what a tracker's point should say of a benchmark, read from
// the Result's histograms: the merged percentile, each trial's, and
// whether x/perf's benchmath gives those trials a 95% interval.
type truth struct {
	value        float64
	trials       []float64
	least, most  float64
	wantInterval bool
}

func truths(t *testing.T, res *result.Result) map[string]truth {
	out := map[string]truth{}
	for _, s := range res.Scenarios {
		for name, m := range s.Metrics {
			if m.Merged().Count() == 0 {
				continue
			}
			for _, p := range stats.Percentiles {
				tr := truth{value: p.Of(m.Merged()), least: math.Inf(1), most: math.Inf(-1)}
				for _, trial := range m.Trials {
					if trial.Histogram.Count() > 0 {
						x := p.Of(trial.Histogram)
						tr.trials = append(tr.trials, x)
						tr.least, tr.most = math.Min(tr.least, x), math.Max(tr.most, x)
					}
				}
				sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(tr.trials), &benchmath.DefaultThresholds), 0.95)
				tr.wantInterval = p.Q < 1 && len(sum.Warnings) == 0
				out[s.Name+"/"+name+"/"+p.Name] = tr
			}
		}
	}
	return out
}

// near allows the tenth of a ns the trackers round to.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.05+1e-9 }

// checkBounds: an interval holds the value and lies within the trials'
// values.
func checkBounds(t *testing.T, name string, w truth, value, lo, hi float64) {
	t.Helper()
	if !(lo <= value && value <= hi) || lo < w.least-0.05 || hi > w.most+0.05 {
		t.Errorf("%s: %g in [%g, %g], want it inside and the bounds within the trials' %g to %g", name, value, lo, hi, w.least, w.most)
	}
}

// trackerResults are the Results the trackers are checked on: recorded
// runs of 2, 5, 6 and 20 trials, and the synthetic sample (3 trials and 1).
func trackerResults(t *testing.T) map[string]*result.Result {
	out := map[string]*result.Result{"sample": sample(t)}
	for _, n := range []int{2, 5, 6, 20} {
		out[fmt.Sprintf("recorded %d trials", n)] = recorded(t, n)
	}
	return out
}

// TestGitHubActionBenchmark reads the output as github-action-benchmark's
// customSmallerIsBetter extractor does (a JSON array of name, value, unit,
// range, extra: its schema) and checks the numbers against the Result:
// one entry per benchmark, names unique (the action matches a run's
// entries to the previous run's by name), the value the merged
// percentile, a range only where benchmath gives the trials an interval,
// and never wider than the trials' values.
func TestGitHubActionBenchmark(t *testing.T) {
	for name, res := range trackerResults(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := New(res).Trackers().GitHubActionBenchmark(&b); err != nil {
				t.Fatal(err)
			}
			validateSchema(t, "github-action-benchmark.schema.json", b.Bytes())
			var got []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
				Unit  string  `json:"unit"`
				Range *string `json:"range"`
				Extra string  `json:"extra"`
			}
			d := json.NewDecoder(&b)
			d.DisallowUnknownFields()
			if err := d.Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := truths(t, res)
			if len(got) != len(want) {
				t.Errorf("%d entries, want %d", len(got), len(want))
			}
			var names []string
			for _, e := range got {
				names = append(names, e.Name)
				w, ok := want[e.Name]
				if !ok {
					t.Errorf("unexpected benchmark %q", e.Name)
					continue
				}
				if e.Unit != "ns" || !near(e.Value, w.value) {
					t.Errorf("%s: %g %s, want %g ns", e.Name, e.Value, e.Unit, w.value)
				}
				if !strings.Contains(e.Extra, "target host") {
					t.Errorf("%s: extra %q", e.Name, e.Extra)
				}
				if (e.Range != nil) != w.wantInterval {
					t.Errorf("%s: range %v from %d trials; want one only where benchmath gives an interval", e.Name, e.Range, len(w.trials))
				}
				if e.Range == nil {
					continue
				}
				h, err := strconv.ParseFloat(strings.TrimPrefix(*e.Range, "± "), 64)
				if err != nil || !strings.HasPrefix(*e.Range, "± ") || !(h >= 0) || 2*h > w.most-w.least+0.1 {
					t.Errorf("%s: range %q; want ± half an interval within the trials' %g to %g", e.Name, *e.Range, w.least, w.most)
				}
				if !strings.Contains(e.Extra, "95% interval") {
					t.Errorf("%s: extra %q lacks the interval", e.Name, e.Extra)
				}
			}
			slices.Sort(names)
			if len(slices.Compact(names)) != len(got) {
				t.Error("benchmark names repeat")
			}
		})
	}
}

// TestBencher checks the output against Bencher's published BMF schema,
// and its numbers against the Result: every benchmark has the built-in
// latency measure (ns) alone, the merged percentile, and bounds only
// where benchmath gives the trials an interval, lower ≤ value ≤ upper,
// both within the trials' values.
func TestBencher(t *testing.T) {
	for name, res := range trackerResults(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := New(res).Trackers().Bencher(&b); err != nil {
				t.Fatal(err)
			}
			validateSchema(t, "bmf.schema.json", b.Bytes())
			type metric struct {
				Value float64  `json:"value"`
				Lower *float64 `json:"lower_value"`
				Upper *float64 `json:"upper_value"`
			}
			var got map[string]map[string]metric
			d := json.NewDecoder(&b)
			d.DisallowUnknownFields()
			if err := d.Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := truths(t, res)
			if len(got) != len(want) {
				t.Errorf("%d benchmarks, want %d", len(got), len(want))
			}
			intervals := 0
			for name, measures := range got {
				w, ok := want[name]
				m, isLatency := measures["latency"]
				if !ok || !isLatency || len(measures) != 1 {
					t.Errorf("%s: %v", name, measures)
					continue
				}
				if !near(m.Value, w.value) {
					t.Errorf("%s: %g, want %g", name, m.Value, w.value)
				}
				if (m.Lower != nil) != w.wantInterval || (m.Upper != nil) != w.wantInterval {
					t.Errorf("%s: bounds %v, %v from %d trials; want them only where benchmath gives an interval", name, m.Lower, m.Upper, len(w.trials))
					continue
				}
				if m.Lower != nil {
					intervals++
					checkBounds(t, name, w, m.Value, *m.Lower, *m.Upper)
				}
			}
			if strings.HasPrefix(name, "recorded 20") && intervals == 0 {
				t.Error("20 trials and no interval")
			}
		})
	}
}

// TestIntervalWithinTrials: the 95% interval of a side is cut to the
// trials' values where the estimate reaches past them, as it does from
// 6 recorded trials.
func TestIntervalWithinTrials(t *testing.T) {
	d := New(recorded(t, MinIntervalTrials))
	cut := 0
	for _, s := range d.Scenarios {
		for i := range s.Metrics {
			m := &s.Metrics[i]
			for _, p := range stats.Percentiles[:len(stats.Percentiles)-1] {
				pt := intervalOf(m, p)
				_, lo, hi := stats.PercentileOf(report.TrialHistograms(m.src), m.Name, p, 0)
				if round(lo) < pt.lo || round(hi) > pt.hi {
					cut++
				}
			}
		}
	}
	if cut == 0 {
		t.Error("no interval of 6 recorded trials reached past them; the cut is untested")
	}
}
