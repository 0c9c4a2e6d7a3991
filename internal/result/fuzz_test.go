package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// FuzzParse checks that the Result reader never panics, refuses with one of
// its sentinels, and that what it accepts writes out and reads back to the
// same document, with trial counts that add up without wrapping.
func FuzzParse(f *testing.F) {
	good, err := json.Marshal(sample("a", "b"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	partial := sample("a")
	partial.Partial, partial.Error = true, "interrupted"
	h := hist.New()
	h.RecordN(1, 3)
	h.RecordN(1<<40, 2)
	partial.Scenarios[0].Metrics["n"] = &Metric{Unit: "ns", Trials: []Trial{{Histogram: h, Summary: Summarize(h), CPUs: []int{0, 1}, PID: 7}, {Histogram: hist.New()}}}
	partial.Scenarios[0].Gate = map[string]map[string]float64{"*": {"p99": 0.1}}
	if b, err := json.Marshal(partial); err != nil {
		f.Fatal(err)
	} else {
		f.Add(b)
	}
	f.Add([]byte(`{"schema": 1}`))
	f.Add([]byte(`{"schema": 1, "scenarios": [{"name": "a", "metrics": {"m": {"unit": "ns", "trials": [{"histogram": {"scheme": "loglinear-k6-e42", "count": 0, "min": 1, "max": 2, "buckets": [[1, 9223372036854775808], [2, 9223372036854775808]]}}]}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			if r != nil {
				t.Fatal("a Result with the error")
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFutureSchema) {
				t.Fatalf("error %q is neither ErrCorrupt nor ErrFutureSchema", err)
			}
			return
		}
		out, err := Marshal(r)
		if err != nil {
			t.Fatalf("an accepted Result does not marshal: %v", err)
		}
		r2, err := Parse(out)
		if err != nil {
			t.Fatalf("an accepted Result, written out, is refused: %v\n%s", err, out)
		}
		again, err := Marshal(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("written out twice, an accepted Result differs:\n%s\n%s", out, again)
		}
		for _, s := range r.Scenarios {
			for name, m := range s.Metrics {
				var want uint64
				for _, tr := range m.Trials {
					want += tr.Histogram.Count()
					Summarize(tr.Histogram)
				}
				if got := m.Merged().Count(); got != want {
					t.Fatalf("scenario %s metric %s: merged count %d, trials add up to %d", s.Name, name, got, want)
				}
			}
		}
	})
}
