package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/show"
)

// docsLoader serves the schemas' own $id URLs from docs/, so that one
// schema's $ref to another (matrix to compare, show to result) resolves to
// the file beside it.
type docsLoader struct{}

const docsURL = "https://github.com/tailgate-ci/tailgate/docs/"

func (docsLoader) Load(u string) (any, error) {
	name, ok := strings.CutPrefix(u, docsURL)
	if !ok {
		return nil, fmt.Errorf("%s: not a schema of docs/", u)
	}
	f, err := os.Open(filepath.Join("..", "..", "docs", filepath.Base(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}

// docsSchema compiles docs/NAME.schema.json with its references to the
// other schemas of docs/.
func docsSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{"file": jsonschema.FileLoader{}, "https": docsLoader{}})
	s, err := c.Compile(docsURL + name + ".schema.json")
	if err != nil {
		t.Fatalf("docs/%s.schema.json: %v", name, err)
	}
	return s
}

func validateBytes(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(doc)
}

// openMetricsHistograms parses OpenMetrics text with prometheus/common's
// OpenMetrics 1.0 parser and returns each histogram by scenario/metric.
func openMetricsHistograms(t *testing.T, text string) map[string]*dto.Histogram {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	out := map[string]*dto.Histogram{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("OpenMetrics parser: %v", err)
		}
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["scenario"]+"/"+labels["metric"]] = m.GetHistogram()
		}
	}
}

type promBucket struct {
	upper float64
	count float64
}

// histogramQuantile is PromQL's histogram_quantile over classic buckets
// as Prometheus documents and implements it (promql/quantile.go,
// bucketQuantile): the rank's bucket found by cumulative count, the value
// interpolated linearly inside it, from 0 for the first bucket; the
// highest finite bound when the rank falls in +Inf.
func histogramQuantile(q float64, buckets []promBucket) float64 {
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].upper < buckets[j].upper })
	if len(buckets) < 2 || !math.IsInf(buckets[len(buckets)-1].upper, 1) {
		return math.NaN()
	}
	total := buckets[len(buckets)-1].count
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(len(buckets)-1, func(i int) bool { return buckets[i].count >= rank })
	if b == len(buckets)-1 {
		return buckets[len(buckets)-2].upper
	}
	if b == 0 && buckets[0].upper <= 0 {
		return buckets[0].upper
	}
	start, end, count := 0.0, buckets[b].upper, buckets[b].count
	if b > 0 {
		start = buckets[b-1].upper
		count -= buckets[b-1].count
		rank -= buckets[b-1].count
	}
	return start + (end-start)*(rank/count)
}

// coarseBucket is the index of the OpenMetrics bucket that holds v ns.
func coarseBucket(v float64) int {
	bounds := show.OpenMetricsBounds()
	return sort.Search(len(bounds), func(i int) bool { return float64(bounds[i])+1 > v })
}

// bucketEdges returns the bound below OpenMetrics bucket k (0 for the
// first) and its own, in ns.
func bucketEdges(k int) (lo, hi float64) {
	bounds := show.OpenMetricsBounds()
	if k >= len(bounds) {
		return float64(bounds[len(bounds)-1]), math.Inf(1)
	}
	if k > 0 {
		lo = float64(bounds[k-1])
	}
	return lo, float64(bounds[k])
}

// TestShowFormatsOnRealRuns runs syscall-read twice on this kernel and
// reads each show format as its consumer would: the two OpenMetrics
// outputs have identical le sets and Prometheus's histogram_quantile over
// their sum is tailgate's quantile of all trials merged to within a
// bucket; the JSON validates against docs/show.schema.json; the tracker
// formats against their tools' shapes.
func TestShowFormatsOnRealRuns(t *testing.T) {
	dir := t.TempDir()
	var results []string
	for _, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		code, stdout, stderr := runInProcess(t, "run", "syscall-read", "--trials", "2", "--duration", "200ms", "--warmup", "0s", "-o", out)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		results = append(results, out)
	}
	showOf := func(path, format string) string {
		t.Helper()
		code, stdout, stderr := cli("show", path, "--format", format)
		if code != 0 {
			t.Fatalf("show --format %s: exit %d: %s", format, code, stderr)
		}
		return stdout
	}

	var runs []map[string]*dto.Histogram
	for _, r := range results {
		runs = append(runs, openMetricsHistograms(t, showOf(r, "openmetrics")))
	}
	les := func(h *dto.Histogram) []float64 {
		var out []float64
		for _, b := range h.Bucket {
			out = append(out, b.GetUpperBound())
		}
		return out
	}
	merged := map[string]*hist.Histogram{}
	for _, r := range results {
		res, err := result.Load(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Scenarios {
			for name, m := range s.Metrics {
				k := s.Name + "/" + name
				if merged[k] == nil {
					merged[k] = hist.New()
				}
				merged[k].Merge(m.Merged())
			}
		}
	}
	checked := 0
	for key, a := range runs[0] {
		b, ok := runs[1][key]
		if !ok {
			continue // a metric with events in one run only
		}
		if diff := cmp.Diff(les(a), les(b)); diff != "" {
			t.Errorf("%s: le sets differ between runs (-a +b):\n%s", key, diff)
			continue
		}
		var sum []promBucket
		for i := range a.Bucket {
			sum = append(sum, promBucket{a.Bucket[i].GetUpperBound(), float64(a.Bucket[i].GetCumulativeCount() + b.Bucket[i].GetCumulativeCount())})
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			prom := histogramQuantile(q, slices.Clone(sum)) * 1e9
			want := merged[key].Quantile(q)
			// Within the bucket that holds tailgate's quantile, as
			// Prometheus reads it: from the bound below to its own.
			lo, hi := bucketEdges(coarseBucket(want))
			if prom < lo*(1-1e-9) || prom > hi*(1+1e-9) {
				t.Errorf("%s q%g: histogram_quantile %.1f ns, tailgate %.1f ns: outside its bucket [%g, %g]", key, q, prom, want, lo, hi)
			}
			t.Logf("%s q%g: histogram_quantile %.1f ns, tailgate's merged quantile %.1f ns", key, q, prom, want)
		}
		checked++
	}
	if checked == 0 || runs[0]["syscall-read/syscall.read"] == nil {
		t.Fatalf("no metric with events in both runs: %v", runs[0])
	}

	showSchema := docsSchema(t, "show")
	for _, r := range results {
		if err := validateBytes(t, showSchema, []byte(showOf(r, "json"))); err != nil {
			t.Errorf("show --format json of %s against docs/show.schema.json: %v", filepath.Base(r), err)
		}
	}
	for format, schema := range map[string]string{"github-action-benchmark": "github-action-benchmark", "bencher": "bmf"} {
		c := jsonschema.NewCompiler()
		s, err := c.Compile(filepath.Join("..", "..", "report", "show", "testdata", schema+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := validateBytes(t, s, []byte(showOf(results[0], format))); err != nil {
			t.Errorf("show --format %s against %s.schema.json: %v", format, schema, err)
		}
	}
	// The schema is not vacuous: a field it does not know.
	bad := strings.Replace(showOf(results[0], "json"), `"schema": 1`, `"schema": 1, "surprise": true`, 1)
	if err := validateBytes(t, showSchema, []byte(bad)); err == nil || !strings.Contains(err.Error(), "surprise") {
		t.Errorf("an unknown field passes docs/show.schema.json: %v", err)
	}
}

// TestMatrixJSONSchema checks matrix --format json against
// docs/matrix.schema.json, whose comparisons are docs/compare.schema.json.
func TestMatrixJSONSchema(t *testing.T) {
	dir := t.TempDir()
	f := &fakeExec{scales: map[string]float64{"B": 1.4, "C": 1.0}}
	mjson := filepath.Join(dir, "matrix.json")
	code, stdout, stderr := runMatrixWith(f.env(fakeSysctls(t)),
		"--variant", "A", "--variant", "B", "--variant", "C", "syscall-read", "--trials", "4", "--format", "json="+mjson)
	if code != exitRegression {
		t.Fatalf("matrix exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(mjson)
	if err != nil {
		t.Fatal(err)
	}
	s := docsSchema(t, "matrix")
	if err := validateBytes(t, s, b); err != nil {
		t.Errorf("matrix --format json against docs/matrix.schema.json: %v", err)
	}
	for _, bad := range []struct{ from, to, why string }{
		{`"schema": 1`, `"schema": 2`, "a future schema"},
		{`"verdict": "regression"`, `"verdict": "worse"`, "an unknown verdict inside a comparison"},
	} {
		if err := validateBytes(t, s, bytes.Replace(b, []byte(bad.from), []byte(bad.to), 1)); err == nil {
			t.Errorf("%s passes docs/matrix.schema.json", bad.why)
		}
	}
}
