package result

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

func sample(names ...string) *Result {
	r := &Result{
		Schema:      SchemaVersion,
		Target:      Target{Name: "host", Kind: "host"},
		Environment: Environment{KernelRelease: "6.1.0", CPUModel: "x", CPUs: 2},
	}
	for i, n := range names {
		h := hist.New()
		h.RecordN(uint64(100*(i+1)), 10)
		r.Scenarios = append(r.Scenarios, Scenario{
			Name: n, Params: "p-" + n, Trials: 1, Definition: json.RawMessage(`{}`),
			Metrics: map[string]*Metric{"m": {Unit: "ns", Trials: []Trial{{Histogram: h, Summary: Summarize(h), Ops: 10}}}},
		})
	}
	return r
}

func TestMergeShardsRoundTrip(t *testing.T) {
	whole := sample("a", "b", "c")
	parts := []Input{
		{"shard1.json", sample("a", "c")},
		{"shard2.json", sample("b")},
	}
	// Shard 2's "b" is the second scenario of whole: give it the same data.
	parts[1].Result.Scenarios[0] = whole.Scenarios[1]
	parts[0].Result.Scenarios[1] = whole.Scenarios[2]
	got, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Marshal(whole)
	b, _ := Marshal(got)
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := Marshal(back)
	if diff := cmp.Diff(string(a), string(b2)); diff != "" {
		t.Errorf("merge of shards differs from the whole (-whole +merged):\n%s", diff)
	}
}

// again returns r as another run of it: its trials measured by another
// process.
func again(r *Result, pid int) *Result {
	for _, s := range r.Scenarios {
		for _, m := range s.Metrics {
			for i := range m.Trials {
				m.Trials[i].PID = pid
			}
		}
	}
	return r
}

func TestMergeConcatenatesTrials(t *testing.T) {
	got, err := Merge([]Input{{"1.json", sample("a")}, {"2.json", again(sample("a"), 2)}})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Find("a")
	if s.Trials != 2 || len(s.Metrics["m"].Trials) != 2 {
		t.Errorf("trials %d, metric trials %d; want 2 and 2", s.Trials, len(s.Metrics["m"].Trials))
	}
}

func TestMergeRefuses(t *testing.T) {
	otherKernel := sample("a")
	otherKernel.Environment.KernelRelease = "6.12.0"
	otherTarget := sample("a")
	otherTarget.Target = Target{Name: "vm61", Kind: "vm", Kernel: "debian:6.1.0-28-cloud-amd64"}
	otherParams := sample("a")
	otherParams.Scenarios[0].Params = "changed"
	tests := []struct {
		name string
		r    *Result
		want string
	}{
		{"environment", otherKernel, "kernel_release"},
		{"target", otherTarget, "target"},
		{"params", otherParams, "different parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge([]Input{{"base.json", sample("a")}, {"other.json", tt.r}})
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("err %v, want ErrMismatch", err)
			}
			for _, s := range []string{"base.json", "other.json", tt.want} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestMergeRefusesCountOverflow(t *testing.T) {
	big := func() *Result {
		r := sample("a")
		h := hist.New()
		h.RecordN(100, 1<<63)
		r.Scenarios[0].Metrics["m"].Trials[0] = Trial{Histogram: h, Summary: Summarize(h)}
		return r
	}
	_, err := Merge([]Input{{"x.json", big()}, {"y.json", again(big(), 2)}})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "2^64") {
		t.Errorf("Merge = %v, want a refusal: the merged counts overflow", err)
	}
}

// TestMergeRefusesCopiedResult: a Result given twice under two names (a
// byte-identical copy), or beside a merge that holds it, would count its
// trials twice.
func TestMergeRefusesCopiedResult(t *testing.T) {
	run := func() *Result { return again(sample("a", "b"), 4242) }
	other := again(sample("a"), 77)
	merged, err := Merge([]Input{{"run.json", run()}, {"other.json", other}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   []Input
	}{
		{"copy", []Input{{"run.json", run()}, {"copy.json", run()}}},
		{"merge beside an input", []Input{{"merged.json", merged}, {"run.json", run()}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.in)
			if !errors.Is(err, ErrDuplicateTrial) {
				t.Fatalf("Merge = %v, want ErrDuplicateTrial", err)
			}
			for _, s := range []string{c.in[0].Path, c.in[1].Path, "pid 4242"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}
