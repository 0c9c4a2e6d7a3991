package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// narrow is a Result of scenarios × metrics × trials, each trial's
// histogram one bucket: the most trials a byte of JSON holds.
func narrow(scenarios, metrics, trials int) *Result {
	r := &Result{
		Schema:      SchemaVersion,
		Target:      Target{Name: "host", Kind: "host"},
		Environment: Environment{KernelRelease: "6.1.0", CPUModel: "x", CPUs: 2},
	}
	pid := 1
	for s := range scenarios {
		sc := Scenario{Name: fmt.Sprintf("s%d", s), Params: "p", Trials: trials, Definition: json.RawMessage(`{}`), Metrics: map[string]*Metric{}}
		for m := range metrics {
			met := &Metric{Unit: "ns"}
			for t := range trials {
				h := hist.New()
				h.RecordN(uint64(1000+t%7), 1+uint64(t))
				pid++
				met.Trials = append(met.Trials, Trial{Histogram: h, Summary: Summarize(h), Ops: 1 + uint64(t), Duration: 1, PID: pid})
			}
			sc.Metrics[fmt.Sprintf("m%d", m)] = met
		}
		r.Scenarios = append(r.Scenarios, sc)
	}
	return r
}

// TestParseHoldsAResultInFewTimesItsSize: a Result of many one-bucket
// trials once cost about 100 times its size to hold (a 9.1 MB one took
// 816 MB in show), each trial's histogram every bucket. Decoded, it holds
// at most 4 times its size.
func TestParseHoldsAResultInFewTimesItsSize(t *testing.T) {
	b, err := json.Marshal(narrow(4, 2, 500))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(r)
	ratio := float64(held) / float64(len(b))
	t.Logf("heap %d → %d", before.HeapAlloc, after.HeapAlloc)
	t.Logf("a %d-byte Result holds %d bytes decoded (%.2f times)", len(b), held, ratio)
	if ratio > 4 {
		t.Errorf("a %d-byte Result holds %d bytes decoded, %.1f times its size; the most is 4", len(b), held, ratio)
	}
	// Read sparse, it is what it was.
	m := r.Scenarios[0].Metrics["m0"]
	if got := m.Trials[3].Histogram.Quantile(0.99); got != 1003 {
		t.Errorf("trial 4's p99 reads %g, want 1003", got)
	}
	if got := m.Merged().Count(); got != 500*501/2 {
		t.Errorf("the merged trials count %d, want %d", got, 500*501/2)
	}
}

// TestParseRefusesMoreThanARunMakes: a Result held trials and scenarios
// without end (50,000 trials, where --trials stops at 1,000). One of more
// than a run makes is refused before it is decoded, in one line.
func TestParseRefusesMoreThanARunMakes(t *testing.T) {
	tests := []struct {
		name string
		r    *Result
		want string
	}{
		{"trials of a metric", narrow(1, 1, MaxTrials+1), "more than 1000 trials, the most a run makes"},
		{"scenarios", narrow(MaxScenarios+1, 1, 1), "more than 256 scenarios, the most a run makes"},
		{"a scenario's count of trials", func() *Result { r := narrow(1, 1, 2); r.Scenarios[0].Trials = MaxTrials + 1; return r }(), "1001 trials; a run makes 0 to 1000"},
		{"a scenario's metrics", narrow(1, MaxMetrics+1, 1), "more than 256 metrics, the most a run makes"},
		{"a trial's CPUs", func() *Result {
			r := narrow(1, 1, 1)
			r.Scenarios[0].Metrics["m0"].Trials[0].CPUs = make([]int, MaxCPUs+1)
			return r
		}(), "more than 8192 CPUs"},
		{"a trial's slowest events", func() *Result {
			r := narrow(1, 1, 1)
			r.Scenarios[0].Metrics["m0"].Trials[0].Slowest = make([]Event, MaxSlowest+1)
			return r
		}(), "more than 1000 slow events"},
		{"an empty slow event", func() *Result {
			r := narrow(1, 1, 1)
			r.Scenarios[0].Metrics["m0"].Trials[0].Slowest = []Event{{}}
			return r
		}(), ""},
		{"skipped scenarios", func() *Result {
			r := narrow(1, 1, 1)
			for i := range MaxScenarios + 1 {
				r.Skipped = append(r.Skipped, Skipped{Scenario: fmt.Sprintf("k%d", i), Reason: "x"})
			}
			return r
		}(), "more than 256 skipped scenarios"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				// "{}": three bytes of JSON, an Event's size to hold.
				tt.want = `has no "latency_ns", which every one has`
				b = bytes.Replace(b, []byte(`{"latency_ns":0,"at_ns":0,"cpu":0,"comm":"","pid":0,"tid":0}`), []byte(`{}`), 1)
			}
			_, err = Parse(b)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse: %v; want one line of ErrCorrupt saying %q", err, tt.want)
			}
		})
	}
	// At the caps, a Result is read.
	b, err := json.Marshal(narrow(1, 1, MaxTrials))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err != nil {
		t.Errorf("a Result of %d trials is refused: %v", MaxTrials, err)
	}
}

// TestMergeStopsAtWhatARunMakes: merge would write a Result no reader
// takes; it refuses instead.
func TestMergeStopsAtWhatARunMakes(t *testing.T) {
	a, b := narrow(1, 1, 600), narrow(1, 1, 600)
	for _, tr := range b.Scenarios[0].Metrics["m0"].Trials {
		tr.Histogram.RecordN(5, 1)
	}
	for i := range b.Scenarios[0].Metrics["m0"].Trials {
		tr := &b.Scenarios[0].Metrics["m0"].Trials[i]
		tr.Summary = Summarize(tr.Histogram)
	}
	_, err := Merge([]Input{{"a.json", a}, {"b.json", b}})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "1200 trials; a Result holds at most 1000") {
		t.Errorf("merge of 600 and 600 trials: %v", err)
	}
	many := narrow(MaxScenarios, 1, 1)
	one := narrow(1, 1, 1)
	one.Scenarios[0].Name = "extra"
	one.Scenarios[0].Metrics["m0"].Trials[0].PID = 1 << 20
	_, err = Merge([]Input{{"many.json", many}, {"one.json", one}})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "at most 256") {
		t.Errorf("merge of 256 and 1 scenarios: %v", err)
	}
}
