package report

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
		{in: "p95=10%", wantErr: `unknown percentile "p95"`},
		{in: "p99=ten%", wantErr: "not a number"},
		{in: "p99=10", wantErr: "did you mean 10%"},
		{in: "p99=0%", want: Threshold{Percentile: "p99", Value: 0}},
		{in: "p99=-5%", wantErr: "must not be negative"},
		{in: ":p99=5%", wantErr: "empty metric"},
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
		{"default p50", "m", "p50", nil, nil, 0.05, true},
		{"default p99.9", "m", "p99.9", nil, nil, 0.25, true},
		{"max not gated by default", "m", "max", nil, nil, 0, false},
		{"scenario star", "m", "p99", gate, nil, 0.20, true},
		{"scenario star gates max", "m", "max", gate, nil, 0.5, true},
		{"scenario metric beats star", "syscall.read", "p99", gate, nil, 0.15, true},
		{"scenario zero gates any confirmed change", "syscall.read", "p50", gate, nil, 0, true},
		{"cli percentile beats scenario metric", "syscall.write", "p99", gate, cli, 0.08, true},
		{"cli metric beats cli percentile", "syscall.read", "p99", gate, cli, 0.05, true},
		{"cli off", "m", "p90", gate, cli, 0, false},
		{"later cli wins", "m", "p50", nil, []Threshold{{Percentile: "p50", Value: 0.1}, {Percentile: "p50", Value: 0.2}}, 0.2, true},
		{"untouched falls through", "m", "p99.9", gate, cli, 0.25, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, gated := ResolveThreshold(c.metric, c.p, c.gate, c.cli)
			if got != c.want || gated != c.wantGated {
				t.Errorf("= %g, %v; want %g, %v", got, gated, c.want, c.wantGated)
			}
		})
	}
}
