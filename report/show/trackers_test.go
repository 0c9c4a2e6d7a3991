package show

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

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

// wantPoints is what each tracker should get from sample: a benchmark per
// scenario, metric with events and percentile, with stats.PercentileOf's
// value and interval.
func wantPoints(t *testing.T) map[string][3]float64 {
	res := sample(t)
	want := map[string][3]float64{}
	for _, s := range res.Scenarios {
		for name, m := range s.Metrics {
			if m.Merged().Count() == 0 {
				continue
			}
			for _, p := range stats.Percentiles {
				v, lo, hi := stats.PercentileOf(m, name, p, 0)
				want[s.Name+"/"+name+"/"+p.Name] = [3]float64{v, lo, hi}
			}
		}
	}
	return want
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.05 }

// TestGitHubActionBenchmark reads the output as github-action-benchmark's
// customSmallerIsBetter extractor does (a JSON array of name, value, unit,
// range, extra) and checks it against the BenchmarkResult shape: one
// entry per benchmark, names unique (the action matches a run's entries
// to the previous run's by name), the range half the interval.
func TestGitHubActionBenchmark(t *testing.T) {
	var b bytes.Buffer
	if err := New(sample(t)).GitHubActionBenchmark(&b); err != nil {
		t.Fatal(err)
	}
	validateSchema(t, "github-action-benchmark.schema.json", b.Bytes())
	var got []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Unit  string  `json:"unit"`
		Range string  `json:"range"`
		Extra string  `json:"extra"`
	}
	d := json.NewDecoder(&b)
	d.DisallowUnknownFields()
	if err := d.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := wantPoints(t)
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
		if e.Unit != "ns" || !near(e.Value, w[0]) {
			t.Errorf("%s: %g %s, want %g ns", e.Name, e.Value, e.Unit, w[0])
		}
		if math.IsNaN(w[1]) {
			if e.Range != "" {
				t.Errorf("%s: range %q without an interval", e.Name, e.Range)
			}
			continue
		}
		half := strings.TrimPrefix(e.Range, "± ")
		var h float64
		if err := json.Unmarshal([]byte(half), &h); err != nil || !near(h, (w[2]-w[1])/2) {
			t.Errorf("%s: range %q, want ± %g", e.Name, e.Range, (w[2]-w[1])/2)
		}
		if !strings.Contains(e.Extra, "95% interval") || !strings.Contains(e.Extra, "target host") {
			t.Errorf("%s: extra %q", e.Name, e.Extra)
		}
	}
	slices.Sort(names)
	if len(slices.Compact(names)) != len(got) {
		t.Error("benchmark names repeat")
	}
}

// TestBencher checks the output against Bencher's published BMF schema,
// and strictly: every benchmark has the built-in latency measure (ns)
// alone, with the percentile and its interval around it.
func TestBencher(t *testing.T) {
	var b bytes.Buffer
	if err := New(sample(t)).Bencher(&b); err != nil {
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
	want := wantPoints(t)
	if len(got) != len(want) {
		t.Errorf("%d benchmarks, want %d", len(got), len(want))
	}
	for name, measures := range got {
		w, ok := want[name]
		m, isLatency := measures["latency"]
		if !ok || !isLatency || len(measures) != 1 {
			t.Errorf("%s: %v", name, measures)
			continue
		}
		if !near(m.Value, w[0]) {
			t.Errorf("%s: %g, want %g", name, m.Value, w[0])
		}
		switch {
		case math.IsNaN(w[1]):
			if m.Lower != nil || m.Upper != nil {
				t.Errorf("%s: bounds without an interval", name)
			}
		case m.Lower == nil || m.Upper == nil || !near(*m.Lower, w[1]) || !near(*m.Upper, w[2]) || *m.Lower > m.Value || *m.Upper < m.Value:
			t.Errorf("%s: %+v, want [%g, %g]", name, m, w[1], w[2])
		}
	}
}
