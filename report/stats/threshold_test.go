package stats

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Threshold
		wantErr string
	}{
		{in: "p99=8%", want: Threshold{Percentile: "p99", Value: 0.08}},
		{in: "p99.9=25%", want: Threshold{Percentile: "p99.9", Value: 0.25}},
		{in: "p50=0.05", want: Threshold{Percentile: "p50", Value: 0.05}},
		{in: "syscall.read:p99=5%", want: Threshold{Metric: "syscall.read", Percentile: "p99", Value: 0.05}},
		{in: "max=50%", want: Threshold{Percentile: "max", Value: 0.5}},
		{in: "p90=off", want: Threshold{Percentile: "p90", Off: true}},
		{in: "p99", wantErr: "want [METRIC:]PERCENTILE=VALUE"},
		{in: "p95=10%", want: Threshold{Percentile: "p95", Value: 0.1}},
		{in: "p100=10%", wantErr: `unknown percentile "p100"`},
		{in: "p99=ten%", wantErr: "not a number"},
		{in: "p99=10", wantErr: "did you mean 10%"},
		{in: "p99=0%", want: Threshold{Percentile: "p99", Value: 0}},
		{in: "p99=-5%", wantErr: "must not be negative"},
		{in: "p99=10000000%", wantErr: "at most 1000%"},
		{in: ":p99=5%", wantErr: "empty metric"},
		// ParseFloat reads these; none is a threshold.
		{in: "p99=Inf", wantErr: "not a finite value"},
		{in: "p99=inf%", wantErr: "not a finite value"},
		{in: "p99=+Inf%", wantErr: "not a finite value"},
		{in: "p99=-Inf%", wantErr: "not a finite value"},
		{in: "p99=Infinity", wantErr: "not a finite value"},
		{in: "p99=NaN", wantErr: "not a finite value"},
		{in: "p99=NaN%", wantErr: "not a finite value"},
		{in: "syscall.read:p99= nan %", wantErr: "not a finite value"},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseThreshold(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if back, err := ParseThreshold(got.String()); err != nil || back != got {
				t.Errorf("String() %q does not parse back: %v %v", got.String(), back, err)
			}
		})
	}
}

func TestResolveThreshold(t *testing.T) {
	gate := map[string]map[string]float64{
		"*":            {"p99": 0.20, "max": 0.5},
		"syscall.read": {"p99": 0.15, "p50": 0},
	}
	cli := []Threshold{
		{Percentile: "p99", Value: 0.08},
		{Metric: "syscall.read", Percentile: "p99", Value: 0.05},
		{Percentile: "p90", Off: true},
	}
	for _, c := range []struct {
		name      string
		metric, p string
		gate      map[string]map[string]float64
		cli       []Threshold
		want      float64
		wantGated bool
	}{
		{"nothing named is not gated", "m", "p50", nil, nil, 0, false},
		{"p99.9 unnamed is not gated", "m", "p99.9", gate, nil, 0, false},
		{"cli adds a percentile", "m", "p50", nil, []Threshold{{Percentile: "p50", Value: 0.05}}, 0.05, true},
		{"cli turns a gated one off", "syscall.read", "p99", gate, []Threshold{{Metric: "syscall.read", Percentile: "p99", Off: true}}, 0, false},
		{"scenario star", "m", "p99", gate, nil, 0.20, true},
		{"scenario star gates max", "m", "max", gate, nil, 0.5, true},
		{"scenario metric beats star", "syscall.read", "p99", gate, nil, 0.15, true},
		{"scenario zero gates any confirmed change", "syscall.read", "p50", gate, nil, 0, true},
		{"cli percentile beats scenario metric", "syscall.write", "p99", gate, cli, 0.08, true},
		{"cli metric beats cli percentile", "syscall.read", "p99", gate, cli, 0.05, true},
		{"cli off", "m", "p90", gate, cli, 0, false},
		{"later cli wins", "m", "p50", nil, []Threshold{{Percentile: "p50", Value: 0.1}, {Percentile: "p50", Value: 0.2}}, 0.2, true},
		{"untouched falls through to the gate", "m", "max", gate, cli, 0.5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, gated := ResolveThreshold(c.metric, c.p, c.gate, c.cli)
			if got != c.want || gated != c.wantGated {
				t.Errorf("= %g, %v; want %g, %v", got, gated, c.want, c.wantGated)
			}
		})
	}
}

// Any percentile may be gated: p95 and p99.99 by name, each written one
// way only; what is not a percentile is refused with the names it takes.
func TestLookupAnyPercentile(t *testing.T) {
	for _, c := range []struct {
		name string
		q    float64
		ok   bool
	}{
		{"p95", 0.95, true}, {"p99.99", 0.9999, true}, {"p97", 0.97, true}, {"p99.5", 0.995, true},
		{"p99", 0.99, true}, {"max", 1, true}, {"p0.1", 0.001, true},
		{"p100", 0, false}, {"p0", 0, false}, {"p", 0, false}, {"p-5", 0, false}, {"p+5", 0, false},
		{"p095", 0, false}, {"p99.90", 0, false}, {"p1e1", 0, false}, {"95", 0, false}, {"pNaN", 0, false}, {"pInf", 0, false},
	} {
		p, ok := LookupPercentile(c.name)
		if ok != c.ok || (ok && (p.Q != c.q || p.Name != c.name)) {
			t.Errorf("LookupPercentile(%q) = %+v, %v; want q %g, %v", c.name, p, ok, c.q, c.ok)
		}
	}
	if _, err := ParseThreshold("p97=5%"); err != nil {
		t.Errorf("p97=5%%: %v", err)
	}
	if _, err := ParseThreshold("p100=5%"); err == nil || !strings.Contains(err.Error(), "p99.99") {
		t.Errorf("p100=5%%: %v, want an error naming what is taken", err)
	}
}

// A gated p95 is reported and judged, in quantile order, beside the
// standard percentiles.
func TestGateAnyPercentile(t *testing.T) {
	got := PercentilesFor(map[string]map[string]float64{"m": {"p95": 0.1, "p99": 0.1}}, []Threshold{{Percentile: "p99.99", Value: 0.05}})
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if want := "p50 p90 p95 p99 p99.9 p99.99 max"; strings.Join(names, " ") != want {
		t.Errorf("percentiles %v, want %s", names, want)
	}
}
