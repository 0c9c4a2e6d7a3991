package hist

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBucketBounds(t *testing.T) {
	for i := 0; i < Buckets; i++ {
		lo, w := Bounds(i)
		if got := Bucket(lo); got != i {
			t.Fatalf("Bucket(lo of %d = %d) = %d", i, lo, got)
		}
		if got := Bucket(lo + w - 1); got != i {
			t.Fatalf("Bucket(hi of %d = %d) = %d", i, lo+w-1, got)
		}
		if i >= Sub && float64(w)/float64(lo) > 1.0/Sub+1e-12 {
			t.Fatalf("bucket %d: width %d is more than 1/%d of %d", i, w, Sub, lo)
		}
		if i+1 < Buckets {
			if nlo, _ := Bounds(i + 1); nlo != lo+w {
				t.Fatalf("bucket %d ends at %d, next starts at %d", i, lo+w, nlo)
			}
		}
	}
	if got := Bucket(1 << MaxExp); got != Buckets-1 {
		t.Errorf("Bucket(2^MaxExp) = %d, want last %d", got, Buckets-1)
	}
	if got := Bucket(math.MaxUint64); got != Buckets-1 {
		t.Errorf("Bucket(max) = %d, want last %d", got, Buckets-1)
	}
}

// exactQuantile is the ceil(q·n)-th smallest value, the definition Quantile
// approximates.
func exactQuantile(sorted []uint64, q float64) float64 {
	r := int(math.Ceil(q * float64(len(sorted))))
	if r < 1 {
		r = 1
	}
	return float64(sorted[r-1])
}

func TestQuantileError(t *testing.T) {
	shapes := []struct {
		name string
		draw func(r *rand.Rand) float64
	}{
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(8 + 0.7*r.NormFloat64()) }},
		{"bimodal", func(r *rand.Rand) float64 {
			if r.Float64() < 0.9 {
				return 2000 + 200*r.NormFloat64()
			}
			return 150000 + 20000*r.NormFloat64()
		}},
		{"pareto", func(r *rand.Rand) float64 { return 1000 / math.Pow(1-r.Float64(), 1/1.5) }},
		{"small", func(r *rand.Rand) float64 { return float64(r.IntN(200)) }},
	}
	qs := []float64{0.5, 0.9, 0.99, 0.999}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(len(s.name))))
			h := New()
			var vals []uint64
			for range 200000 {
				v := s.draw(r)
				if v < 0 {
					v = 0
				}
				u := uint64(v)
				vals = append(vals, u)
				h.Record(u)
			}
			slices.Sort(vals)
			for _, q := range qs {
				want := exactQuantile(vals, q)
				got := h.Quantile(q)
				if err := math.Abs(got-want) / math.Max(want, 1); err > 0.01 {
					t.Errorf("q%.3f: got %.1f, exact %.1f, error %.2f%% > 1%%", q, got, want, 100*err)
				}
			}
			if h.Max() != vals[len(vals)-1] || h.Min() != vals[0] {
				t.Errorf("min/max %d/%d, want %d/%d", h.Min(), h.Max(), vals[0], vals[len(vals)-1])
			}
		})
	}
}

func TestMergeEqualsRecordingAll(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	a, b, all := New(), New(), New()
	for i := range 10000 {
		v := uint64(r.ExpFloat64() * 5000)
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(b)
	if diff := cmp.Diff(all.Sparse(), a.Sparse()); diff != "" {
		t.Errorf("merge differs from recording all (-all +merged):\n%s", diff)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	h := New()
	for _, v := range []uint64{0, 1, 63, 64, 65, 1000, 123456, 1 << 41} {
		h.RecordN(v, v%7+1)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h.Sparse(), back.Sparse()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got, want := back.Quantile(0.99), h.Quantile(0.99); got != want {
		t.Errorf("p99 after round trip %v, want %v", got, want)
	}
}

func TestFromSparseRejects(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{"scheme", `{"scheme":"linear","count":0,"min":0,"max":0,"sum":0,"buckets":[]}`},
		{"count", `{"scheme":"loglinear-k6-e42","count":5,"min":1,"max":1,"sum":1,"buckets":[[1,4]]}`},
		{"order", `{"scheme":"loglinear-k6-e42","count":2,"min":1,"max":2,"sum":3,"buckets":[[2,1],[1,1]]}`},
		{"range", `{"scheme":"loglinear-k6-e42","count":1,"min":1,"max":1,"sum":1,"buckets":[[99999,1]]}`},
		{"extremes", `{"scheme":"loglinear-k6-e42","count":1,"min":500,"max":500,"sum":1,"buckets":[[3,1]]}`},
		{"counts past 2^64", `{"scheme":"loglinear-k6-e42","count":0,"min":1,"max":2,"sum":1,"buckets":[[1,9223372036854775808],[2,9223372036854775808]]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			if err := json.Unmarshal([]byte(tt.json), &h); err == nil {
				t.Errorf("decoded %s without error", tt.json)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	var h Histogram
	if !math.IsNaN(h.Quantile(0.5)) {
		t.Errorf("quantile of empty = %v, want NaN", h.Quantile(0.5))
	}
	if h.Count() != 0 {
		t.Errorf("count of empty = %d", h.Count())
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	for i := 0; b.Loop(); i++ {
		h.Record(uint64(i * 7919 % 1000003))
	}
}

// TestDecodedIsSparseUntilCounted: a decoded histogram keeps only its
// non-empty buckets, and reads, clones and counts into as one that was
// recorded.
func TestDecodedIsSparseUntilCounted(t *testing.T) {
	want := New()
	for _, v := range []uint64{3, 700, 700, 1 << 30} {
		want.Record(v)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Histogram
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.counts != nil || len(got.idx) != 3 {
		t.Fatalf("decoded: %d dense counts, %d sparse; want 3 sparse", len(got.counts), len(got.idx))
	}
	if !slices.Equal(got.Counts(), want.Counts()) || got.Quantile(0.5) != want.Quantile(0.5) || got.Quantile(0.99) != want.Quantile(0.99) {
		t.Errorf("decoded reads otherwise: p50 %v, p99 %v", got.Quantile(0.5), got.Quantile(0.99))
	}
	c := got.Clone()
	c.Record(5)
	if got.Count() != 4 || slices.Equal(c.Counts(), got.Counts()) {
		t.Error("counting into a clone changed the histogram it came from")
	}
	got.Record(5)
	want.Record(5)
	m := New()
	m.Merge(&got)
	if !slices.Equal(got.Counts(), want.Counts()) || !slices.Equal(m.Counts(), want.Counts()) || got.Count() != 5 {
		t.Errorf("counted into after decoding: %v, want %v", got.Sparse().Buckets, want.Sparse().Buckets)
	}
}
