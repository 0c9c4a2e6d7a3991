package show

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// sample is a Result of two scenarios: syscall-read with three trials of
// syscall.read (lognormal around 20µs, gated by the scenario's default,
// p99 of its primary metric) and an empty sched.wakeup_new, and timer-1ms
// with one trial.
func sample(t *testing.T) *result.Result {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	trials := func(n int, scale float64, events int) *result.Metric {
		m := &result.Metric{Unit: "ns"}
		for range n {
			h := hist.New()
			for range events {
				h.Record(uint64(scale * math.Exp(0.5*r.NormFloat64())))
			}
			m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h), Ops: uint64(events), Duration: 0.5})
		}
		return m
	}
	empty := &result.Metric{Unit: "ns", Trials: []result.Trial{{Histogram: hist.New()}, {Histogram: hist.New()}, {Histogram: hist.New()}}}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(1700000000, 0).UTC(),
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0-test", CPUModel: "Test CPU @ 2.0GHz", CPUs: 2},
		Scenarios: []result.Scenario{
			{Name: "syscall-read", Params: "p1", Trials: 3,
				Gate:    map[string]map[string]float64{"syscall.read": {"p99": 0.1}},
				Metrics: map[string]*result.Metric{"syscall.read": trials(3, 20000, 5000), "sched.wakeup_new": empty, "sched.runq": trials(3, 3000, 50)}},
			{Name: "timer-1ms", Params: "p2", Trials: 1,
				Gate:    map[string]map[string]float64{"timer.wakeup": {"p99": 0.1}},
				Metrics: map[string]*result.Metric{"timer.wakeup": trials(1, 60000, 1000)}},
		},
	}
}

// golden compares got with testdata/name, writing testdata/name.got on a
// mismatch (and the file itself with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("TAILGATE_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (TAILGATE_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs (got in %s.got):\n%s", path, path, cmp.Diff(string(want), string(got)))
	}
}

func TestGolden(t *testing.T) {
	d := New(sample(t))
	for _, tc := range []struct {
		name string
		f    Format
		o    Options
	}{
		{"sample.text.stdout", FormatText, Options{}},
		{"sample.linear.stdout", FormatText, Options{Linear: &Linear{Min: 10000, Max: 40000, Step: 5000}}},
		{"sample.json.stdout", FormatJSON, Options{}},
		{"sample.csv.stdout", FormatCSV, Options{}},
		{"sample.openmetrics.stdout", FormatOpenMetrics, Options{}},
		{"sample.benchstat.stdout", FormatBenchstat, Options{}},
		{"sample.github-action-benchmark.stdout", FormatGitHubActionBenchmark, Options{}},
		{"sample.bencher.stdout", FormatBencher, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := d.Write(&b, tc.f, tc.o); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestLog2(t *testing.T) {
	h := hist.New()
	for _, v := range []uint64{0, 1, 3, 3, 64, 127, 128, 1000} {
		h.Record(v)
	}
	m := Metric{merged: h}
	want := []Row{{0, 1, 1, false, false}, {1, 2, 1, false, false}, {2, 4, 2, false, false}, {4, 8, 0, false, false}, {8, 16, 0, false, false},
		{16, 32, 0, false, false}, {32, 64, 0, false, false}, {64, 128, 2, false, false}, {128, 256, 1, false, false}, {256, 512, 0, false, false}, {512, 1024, 1, false, false}}
	if diff := cmp.Diff(want, m.Log2()); diff != "" {
		t.Errorf("Log2 (-want +got):\n%s", diff)
	}
	var total uint64
	for _, r := range New(sample(t)).Scenarios[0].Metrics[0].Log2() {
		total += r.Count
	}
	if total != 15000 {
		t.Errorf("log2 rows hold %d events, want all 15000", total)
	}
}

func TestLinear(t *testing.T) {
	h := hist.New()
	for _, v := range []uint64{5, 10, 19, 20, 29, 30, 31, 100} {
		h.Record(v)
	}
	m := Metric{merged: h}
	got := m.Linear(Linear{Min: 10, Max: 30, Step: 10})
	want := []Row{{Hi: 10, Count: 1, Below: true}, {Lo: 10, Hi: 20, Count: 2}, {Lo: 20, Hi: 30, Count: 2}, {Lo: 30, Count: 3, Above: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Linear (-want +got):\n%s", diff)
	}
	for _, bad := range []Linear{{0, 10, 0}, {10, 10, 1}, {0, 1e6, 1}} {
		if bad.Check() == nil {
			t.Errorf("%+v passes Check", bad)
		}
	}
}

// parseOpenMetrics reads OpenMetrics 1.0 text with prometheus/common's
// OpenMetrics parser (which checks the ABNF of the standard, # EOF, the
// unit suffix and the order of a histogram's buckets), by family name.
func parseOpenMetrics(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(text), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	fams := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return fams
		}
		if err != nil {
			t.Fatalf("OpenMetrics parser: %v", err)
		}
		fams[mf.GetName()] = &mf
	}
}

// TestOpenMetricsParses reads the output with prometheus/common's
// OpenMetrics parser, of the sample and of recorded runs of 2 and 5
// trials: every histogram has the fixed bucket set, the first and last
// bounds its HELP names, counts that never fall, each bucket the events
// of the Result at or below it, and the Result's count and sum; the
// summary's quantiles are the merged percentiles.
func TestOpenMetricsParses(t *testing.T) {
	for name, res := range map[string]*result.Result{"sample": sample(t), "recorded 2 trials": recorded(t, 2), "recorded 5 trials": recorded(t, 5)} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := New(res).OpenMetrics(&b); err != nil {
				t.Fatal(err)
			}
			fams := parseOpenMetrics(t, b.Bytes())
			h, s := fams["tailgate_latency_seconds"], fams["tailgate_latency_quantile_seconds"]
			if h == nil || s == nil || h.GetType() != dto.MetricType_HISTOGRAM || s.GetType() != dto.MetricType_SUMMARY || h.GetUnit() != "seconds" {
				t.Fatalf("families: %v", fams)
			}
			checkHelpBounds(t, h.GetHelp())
			merged := map[string]*hist.Histogram{}
			for _, sc := range res.Scenarios {
				for name, m := range sc.Metrics {
					if m.Merged().Count() > 0 {
						merged[sc.Name+" "+name] = m.Merged()
					}
				}
			}
			if len(h.Metric) != len(merged) || len(s.Metric) != len(merged) {
				t.Errorf("%d histograms, %d summaries; want %d each (the metrics with events)", len(h.Metric), len(s.Metric), len(merged))
			}
			for _, m := range h.Metric {
				checkHistogram(t, m, merged[seriesKey(m)])
			}
			for _, m := range s.Metric {
				checkSummary(t, m, merged[seriesKey(m)])
			}
		})
	}
}

// seriesKey is a series' "scenario metric".
func seriesKey(m *dto.Metric) string {
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	return labels["scenario"] + " " + labels["metric"]
}

// checkHelpBounds: the histogram's HELP names the first and last bounds
// as the buckets have them.
func checkHelpBounds(t *testing.T, help string) {
	t.Helper()
	bounds := OpenMetricsBounds()
	var first, last float64
	_, after, ok := strings.Cut(help, "le from ")
	if n, err := fmt.Sscanf(after, "%g to %g,", &first, &last); !ok || err != nil || n != 2 {
		t.Fatalf("HELP %q: no \"le from X to Y,\" (%v)", help, err)
	}
	if first != float64(bounds[0])/1e9 || last != float64(bounds[len(bounds)-1])/1e9 {
		t.Errorf("HELP says le from %g to %g; the buckets run from %g to %g", first, last, float64(bounds[0])/1e9, float64(bounds[len(bounds)-1])/1e9)
	}
}

// checkHistogram checks one parsed histogram against the Result's merged
// histogram of its series.
func checkHistogram(t *testing.T, m *dto.Metric, merged *hist.Histogram) {
	t.Helper()
	if merged == nil {
		t.Fatalf("series %s is not in the Result", seriesKey(m))
	}
	hg, bounds := m.GetHistogram(), OpenMetricsBounds()
	if len(hg.Bucket) != len(bounds)+1 || !math.IsInf(hg.Bucket[len(hg.Bucket)-1].GetUpperBound(), 1) {
		t.Fatalf("%d buckets, want the fixed %d and +Inf", len(hg.Bucket), len(bounds))
	}
	if hg.GetSampleCount() != merged.Count() || math.Abs(hg.GetSampleSum()-merged.Mean()*float64(merged.Count())/1e9) > 1e-9*hg.GetSampleSum() {
		t.Errorf("%s: count %d sum %g; want %d, %g", seriesKey(m), hg.GetSampleCount(), hg.GetSampleSum(), merged.Count(), merged.Mean()*float64(merged.Count())/1e9)
	}
	var prev uint64
	for i, bk := range hg.Bucket {
		if bk.GetCumulativeCount() < prev {
			t.Errorf("%s: le %g holds %d, fewer than the bucket below (%d)", seriesKey(m), bk.GetUpperBound(), bk.GetCumulativeCount(), prev)
		}
		prev = bk.GetCumulativeCount()
		if i == len(bounds) {
			if prev != merged.Count() {
				t.Errorf("%s: +Inf holds %d, want all %d", seriesKey(m), prev, merged.Count())
			}
			break
		}
		if got := bk.GetUpperBound(); got != float64(bounds[i])/1e9 {
			t.Errorf("bucket %d: le %g, want %g", i, got, float64(bounds[i])/1e9)
		}
		// A bucket's cumulative count is the events at or below its bound.
		le := uint64(math.Round(bk.GetUpperBound() * 1e9))
		var want uint64
		for j, c := range merged.Counts() {
			if lo, w := hist.Bounds(j); lo+w-1 <= le {
				want += c
			}
		}
		if prev != want {
			t.Errorf("%s: le %g: %d, want %d", seriesKey(m), bk.GetUpperBound(), prev, want)
		}
	}
}

// checkSummary: the summary's quantiles are the merged percentiles, in
// seconds.
func checkSummary(t *testing.T, m *dto.Metric, merged *hist.Histogram) {
	t.Helper()
	if merged == nil {
		t.Fatalf("series %s is not in the Result", seriesKey(m))
	}
	sm := m.GetSummary()
	if sm.GetSampleCount() != merged.Count() || len(sm.Quantile) != len(stats.Percentiles) {
		t.Errorf("%s: count %d, %d quantiles", seriesKey(m), sm.GetSampleCount(), len(sm.Quantile))
	}
	for i, q := range sm.Quantile {
		if want := stats.Percentiles[i].Of(merged) / 1e9; q.GetQuantile() != stats.Percentiles[i].Q || math.Abs(q.GetValue()-want) > 1e-12*want {
			t.Errorf("%s: quantile %g = %g, want %s = %g", seriesKey(m), q.GetQuantile(), q.GetValue(), stats.Percentiles[i].Name, want)
		}
	}
}

// TestOpenMetricsBounds: the bounds nest the Result's buckets (no bucket
// of the Result straddles one), rise, and are at most a quarter of their
// value apart.
func TestOpenMetricsBounds(t *testing.T) {
	bounds := OpenMetricsBounds()
	if len(bounds) != 1+(omMaxExp-omMinExp)<<omSubBits {
		t.Errorf("%d bounds", len(bounds))
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] || float64(bounds[i]-bounds[i-1]) > float64(bounds[i-1]+1)/4 {
			t.Errorf("bounds %d, %d", bounds[i-1], bounds[i])
		}
	}
	for _, b := range bounds {
		// b is the last value of a bucket of the Result's: b+1 starts one.
		if lo, _ := hist.Bounds(hist.Bucket(b + 1)); lo != b+1 {
			t.Errorf("bound %d splits the Result's bucket from %d", b, lo)
		}
	}
}

// TestBenchstatParses reads the output with golang.org/x/perf/benchfmt:
// a result per metric, percentile and trial, in ns/op, and the
// configuration lines as file configuration.
func TestBenchstatParses(t *testing.T) {
	res := sample(t)
	var b bytes.Buffer
	if err := New(res).Benchstat(&b); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "sample.txt")
	var got []string
	config := map[string]string{}
	p99 := map[string][]float64{}
	for r.Scan() {
		switch rec := r.Result(); rec := rec.(type) {
		case *benchfmt.Result:
			for _, c := range rec.Config {
				config[c.Key] = string(c.Value)
			}
			// benchfmt reads ns/op as sec/op and keeps what was written.
			if len(rec.Values) != 1 || rec.Values[0].OrigUnit != "ns/op" || rec.Iters != 1 {
				t.Errorf("%s: values %+v, iters %d", rec.Name, rec.Values, rec.Iters)
			}
			name := string(rec.Name.Full())
			got = append(got, name)
			if strings.HasSuffix(name, "/p99") {
				p99[name] = append(p99[name], rec.Values[0].OrigValue)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != (3+3+1)*5 {
		t.Errorf("%d results, want a line per trial and percentile of each metric with events (35)", len(got))
	}
	// The target and kernel are lines benchstat passes over, so that
	// two sides' files compare (TestBenchstatComparesSides).
	want := map[string]string{"cpu": "Test CPU @ 2.0GHz"}
	if diff := cmp.Diff(want, config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(b.String(), "# target: host\n# kernel: 6.1.0-test\n") {
		t.Errorf("output does not start with the target and kernel as # lines:\n%.200s", b.String())
	}
	m := res.Scenarios[0].Metrics["syscall.read"]
	var trials []float64
	for _, tr := range m.Trials {
		trials = append(trials, tr.Summary.P99)
	}
	if diff := cmp.Diff(trials, p99["SyscallRead/syscall.read/p99"]); diff != "" {
		t.Errorf("p99 of each trial (-want +got):\n%s", diff)
	}
}

// TestBenchstatValues reads the benchstat lines of recorded runs of 2
// and 5 trials with x/perf's benchfmt and summarizes them with its
// benchmath, as benchstat does: each benchmark's samples are the
// trials' own percentiles, in trial order, so its centre is their
// median; and benchmath, like the trackers, gives so few trials no
// interval.
func TestBenchstatValues(t *testing.T) {
	for _, n := range []int{2, 5} {
		t.Run(fmt.Sprintf("%d trials", n), func(t *testing.T) {
			res := recorded(t, n)
			var b bytes.Buffer
			if err := New(res).Benchstat(&b); err != nil {
				t.Fatal(err)
			}
			got := map[string][]float64{}
			r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "recorded.txt")
			for r.Scan() {
				rec, ok := r.Result().(*benchfmt.Result)
				if !ok {
					t.Fatalf("not a result: %v", r.Result())
				}
				v, _ := rec.Value("sec/op")
				got[string(rec.Name.Full())] = append(got[string(rec.Name.Full())], v*1e9)
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, sc := range res.Scenarios {
				for name, m := range sc.Metrics {
					for _, p := range stats.Percentiles {
						want++
						key := camel(sc.Name) + "/" + name + "/" + p.Name
						var trials []float64
						for _, tr := range m.Trials {
							trials = append(trials, p.Of(tr.Histogram))
						}
						if diff := cmp.Diff(trials, got[key], cmpopts.EquateApprox(1e-12, 0)); diff != "" {
							t.Errorf("%s: samples (-trials +benchstat):\n%s", key, diff)
							continue
						}
						sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(got[key], &benchmath.DefaultThresholds), 0.95)
						sorted := slices.Sorted(slices.Values(trials))
						median := (sorted[(n-1)/2] + sorted[n/2]) / 2
						if math.Abs(sum.Center-median) > 1e-9*median || len(sum.Warnings) == 0 {
							t.Errorf("%s: benchmath centre %g, warnings %v; want the trials' median %g, and no interval from %d", key, sum.Center, sum.Warnings, median, n)
						}
					}
				}
			}
			if len(got) != want {
				t.Errorf("%d benchmarks, want %d", len(got), want)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := New(sample(t)).JSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema    int `json:"schema"`
		Scenarios []struct {
			Name    string `json:"name"`
			Metrics []struct {
				Name  string `json:"name"`
				Gated bool   `json:"gated"`
				Log2  []struct {
					Count uint64 `json:"count"`
				} `json:"log2"`
			} `json:"metrics"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != SchemaVersion || len(doc.Scenarios) != 2 || doc.Scenarios[0].Metrics[0].Name != "syscall.read" || !doc.Scenarios[0].Metrics[0].Gated {
		t.Errorf("%+v", doc)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if g, err := ParseFormat(string(f)); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, g, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "want text, json, csv, openmetrics, benchstat, github-action-benchmark, bencher") {
		t.Errorf("xml: %v", err)
	}
}

// TestBenchstatComparesSides runs x/perf's own benchstat, built from the
// module this one requires (a tool line of go.mod, so go mod tidy keeps
// what it needs), on a gate's two sides exported as they are:
// "benchstat base.bs head.bs" must lay them out in one table, head
// against base, even when the targets and kernels differ.
func TestBenchstatComparesSides(t *testing.T) {
	dir := t.TempDir()
	benchstat := filepath.Join(dir, "benchstat")
	if out, err := exec.Command("go", "build", "-o", benchstat, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("build benchstat: %v: %s", err, out)
	}
	write := func(name, target, kernel string, scale float64) string {
		res := recorded(t, 5)
		res.Target.Name = target
		res.Environment.KernelRelease = kernel
		m := res.Scenarios[0].Metrics["syscall.read"]
		for i := range m.Trials {
			s := &m.Trials[i].Summary
			s.P50, s.P90, s.P99, s.P999, s.Max = s.P50*scale, s.P90*scale, s.P99*scale, s.P999*scale, s.Max*scale
		}
		var b bytes.Buffer
		if err := New(res).Benchstat(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	base, head := write("base.bs", "base", "6.1.0-28-cloud-amd64", 1), write("head.bs", "head", "6.12.9-cloud-amd64", 2)
	cmd := exec.Command(benchstat, base, head)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v: %s", err, out)
	}
	text := string(out)
	if n := len(regexp.MustCompile(`│ +base\.bs +│ +head\.bs +│`).FindAllString(text, -1)); n != 1 || !strings.Contains(text, "vs base") {
		t.Errorf("benchstat base.bs head.bs: %d tables with base.bs, want one comparing head with base:\n%s", n, text)
	}
	// Doubled in every trial, 5 against 5: benchstat calls it +100% at
	// p=0.008, on the syscall.read row.
	row := ""
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "SyscallRead/syscall.read/p99 ") {
			row = line
			break
		}
	}
	if !strings.Contains(row, "+100.00%") || !strings.Contains(row, "p=0.008") {
		t.Errorf("syscall.read p99 row %q, want +100.00%% (p=0.008):\n%s", row, text)
	}
}
