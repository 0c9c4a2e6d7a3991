// Package hist is the log-linear (HDR style) latency histogram that every
// tracer counts into, in the kernel and in Go.
//
// Values below 2^SubBits ns have a bucket each. Above that, each power of two
// is split into 2^SubBits equal sub-buckets, so a bucket is at most 1/64 of
// its value wide and a quantile read at the bucket midpoint is within 0.8% of
// any value in it. bpf/include/hist.bpf.h holds the same math in C; the two
// are tested to agree.
package hist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

const (
	// SubBits is k: 2^k exact buckets, then 2^k sub-buckets per power of two.
	SubBits = 6
	// Sub is the number of sub-buckets per power of two.
	Sub = 1 << SubBits
	// MaxExp bounds the range: values of 2^MaxExp ns (about 73 minutes) and
	// more share the last bucket.
	MaxExp = 42
	// Buckets is the number of buckets.
	Buckets = Sub * (MaxExp - SubBits + 1)
	// Scheme names the bucket layout in encoded histograms, so that a future
	// layout is refused rather than misread.
	Scheme = "loglinear-k6-e42"
)

// Bucket returns the bucket index of value v (ns).
func Bucket(v uint64) int {
	if v < Sub {
		return int(v)
	}
	e := bits.Len64(v) - 1
	if e >= MaxExp {
		return Buckets - 1
	}
	return (e-SubBits+1)*Sub + int((v>>(e-SubBits))&(Sub-1))
}

// Bounds returns the smallest value of bucket i and its width.
func Bounds(i int) (lo, width uint64) {
	if i < Sub {
		return uint64(i), 1
	}
	g := i/Sub - 1
	sub := uint64(i % Sub)
	return (Sub + sub) << g, 1 << g
}

// Mid returns the value a quantile in bucket i reads as: the middle of the
// values the bucket holds (exact for the unit-wide buckets).
func Mid(i int) float64 {
	lo, w := Bounds(i)
	return float64(lo) + float64(w-1)/2
}

// Histogram is a latency distribution in ns. The zero value is empty and
// ready to use.
//
// A histogram counted into holds every bucket (Buckets counts, 19 KB); one
// decoded holds only its non-empty buckets until it is counted into, so
// that a Result of many narrow trials costs memory in proportion to its
// size, not to its number of trials.
type Histogram struct {
	counts []uint64 // nil or len Buckets
	// idx and vals are the non-empty buckets, increasing, and their
	// counts, while counts is nil.
	idx   []uint16
	vals  []uint64
	total uint64
	min   uint64
	max   uint64
	sum   float64
}

// New returns an empty histogram.
func New() *Histogram { return &Histogram{} }

// init makes h's counts dense, as counting into it needs.
func (h *Histogram) init() {
	if h.counts == nil {
		h.counts = make([]uint64, Buckets)
		for k, i := range h.idx {
			h.counts[i] = h.vals[k]
		}
		h.idx, h.vals = nil, nil
	}
}

// All yields h's non-empty buckets, increasing, with their counts.
func (h *Histogram) All() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		if h.counts == nil {
			for k, i := range h.idx {
				if !yield(int(i), h.vals[k]) {
					return
				}
			}
			return
		}
		for i, c := range h.counts {
			if c != 0 && !yield(i, c) {
				return
			}
		}
	}
}

// Record counts one value.
func (h *Histogram) Record(v uint64) { h.RecordN(v, 1) }

// RecordN counts value v n times.
func (h *Histogram) RecordN(v, n uint64) {
	if n == 0 {
		return
	}
	h.init()
	h.counts[Bucket(v)] += n
	if h.total == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.total += n
	h.sum += float64(v) * float64(n)
}

// AddBucket adds n counts to bucket i without exact extremes; min and max
// widen to the bucket's bounds unless SetExtremes is called after.
func (h *Histogram) AddBucket(i int, n uint64) {
	if n == 0 || i < 0 || i >= Buckets {
		return
	}
	h.init()
	lo, w := Bounds(i)
	if h.total == 0 || lo < h.min {
		h.min = lo
	}
	if hi := lo + w - 1; hi > h.max {
		h.max = hi
	}
	h.counts[i] += n
	h.total += n
	h.sum += Mid(i) * float64(n)
}

// SetExtremes records exact min, max and sum measured beside the buckets
// (the kernel side keeps them per CPU).
func (h *Histogram) SetExtremes(min, max uint64, sum float64) {
	h.min, h.max, h.sum = min, max, sum
}

// Merge adds o's counts into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.total == 0 {
		return
	}
	h.init()
	for i, c := range o.All() {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.total += o.total
	h.sum += o.sum
}

// Clone returns a deep copy.
func (h *Histogram) Clone() *Histogram {
	c := *h
	c.counts, c.idx, c.vals = slices.Clone(h.counts), slices.Clone(h.idx), slices.Clone(h.vals)
	return &c
}

// Count returns the number of values counted.
func (h *Histogram) Count() uint64 { return h.total }

// Min returns the smallest value counted (0 when empty).
func (h *Histogram) Min() uint64 { return h.min }

// Max returns the largest value counted (0 when empty).
func (h *Histogram) Max() uint64 { return h.max }

// Mean returns the mean of the values counted.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.total)
}

// Counts returns the bucket counts (len Buckets, or nil when empty). The
// slice may be the histogram's own: do not modify it. For a decoded
// histogram it is made on each call; All reads one without that.
func (h *Histogram) Counts() []uint64 {
	if h.counts != nil || h.idx == nil {
		return h.counts
	}
	c := make([]uint64, Buckets)
	for k, i := range h.idx {
		c[i] = h.vals[k]
	}
	return c
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1), read at the midpoint of the
// bucket holding the ceil(q·n)-th smallest value, and clamped to the exact
// extremes. It returns NaN for an empty histogram.
func (h *Histogram) Quantile(q float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return float64(h.min)
	}
	if q >= 1 {
		return float64(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.All() {
		seen += c
		if seen >= rank {
			v := Mid(i)
			return math.Min(math.Max(v, float64(h.min)), float64(h.max))
		}
	}
	return float64(h.max)
}

// QuantileOfCounts is Quantile over bare bucket counts with the given total,
// for callers (the bootstrap) that resample counts without building a
// Histogram. It reads bucket midpoints without clamping.
func QuantileOfCounts(counts []uint64, total uint64, q float64) float64 {
	if total == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			return Mid(i)
		}
	}
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i] > 0 {
			return Mid(i)
		}
	}
	return math.NaN()
}

// Sparse is the JSON form of a Histogram: only non-empty buckets, as
// [index, count] pairs in increasing index order.
type Sparse struct {
	Scheme  string      `json:"scheme"`
	Count   uint64      `json:"count"`
	Min     uint64      `json:"min"`
	Max     uint64      `json:"max"`
	Sum     float64     `json:"sum"`
	Buckets [][2]uint64 `json:"buckets"`
}

// ErrScheme reports an encoded histogram with a bucket layout this version
// does not know.
var ErrScheme = errors.New("unknown histogram scheme")

// Sparse returns the sparse encoding of h.
func (h *Histogram) Sparse() Sparse {
	s := Sparse{Scheme: Scheme, Count: h.total, Min: h.min, Max: h.max, Sum: h.sum, Buckets: [][2]uint64{}}
	for i, c := range h.All() {
		s.Buckets = append(s.Buckets, [2]uint64{uint64(i), c})
	}
	return s
}

// FromSparse decodes a sparse histogram, checking that it is consistent.
func FromSparse(s Sparse) (*Histogram, error) {
	if s.Scheme != Scheme {
		return nil, fmt.Errorf("%w %q (this tailgate reads %q)", ErrScheme, s.Scheme, Scheme)
	}
	h := New()
	var total uint64
	last := -1
	n := 0
	for _, b := range s.Buckets {
		if b[1] != 0 {
			n++
		}
	}
	h.idx, h.vals = make([]uint16, 0, n), make([]uint64, 0, n)
	for _, b := range s.Buckets {
		i := int(b[0])
		if b[0] >= Buckets || i <= last {
			return nil, fmt.Errorf("bucket index %d out of order or range", b[0])
		}
		last = i
		if b[1] == 0 {
			continue
		}
		h.idx, h.vals = append(h.idx, uint16(i)), append(h.vals, b[1])
		var carry uint64
		if total, carry = bits.Add64(total, b[1], 0); carry != 0 {
			return nil, errors.New("bucket counts add up to more than 2^64")
		}
	}
	if n == 0 {
		h.idx, h.vals = nil, nil
	}
	if total != s.Count {
		return nil, fmt.Errorf("bucket counts add up to %d, count says %d", total, s.Count)
	}
	if total > 0 && (s.Min > s.Max || Bucket(s.Min) > last || Bucket(s.Max) < last) {
		return nil, fmt.Errorf("min %d / max %d do not fit the buckets", s.Min, s.Max)
	}
	h.total, h.min, h.max, h.sum = total, s.Min, s.Max, s.Sum
	return h, nil
}

// MarshalJSON encodes h sparsely.
func (h *Histogram) MarshalJSON() ([]byte, error) { return json.Marshal(h.Sparse()) }

// UnmarshalJSON decodes and checks a sparse histogram; a field it does
// not know is an error, as in the document around it.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var s Sparse
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return err
	}
	d, err := FromSparse(s)
	if err != nil {
		return err
	}
	*h = *d
	return nil
}

// ParsePercentile reads a percentile's name: "max" (q = 1), or "p" and a
// number above 0 and below 100 written as it reads best (p95, p99.99; not
// p095 or p99.90, which would name one quantile twice).
func ParsePercentile(name string) (q float64, ok bool) {
	if name == "max" {
		return 1, true
	}
	num, ok := strings.CutPrefix(name, "p")
	if !ok || num == "" || num[0] == '+' || num[0] == '-' {
		return 0, false
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || !(x > 0 && x < 100) || strconv.FormatFloat(x, 'f', -1, 64) != num {
		return 0, false
	}
	// "99.99e-2" rounds once, to the double nearest 0.9999; x/100 does not.
	q, _ = strconv.ParseFloat(num+"e-2", 64)
	return q, true
}

// PercentileNames says which names ParsePercentile takes, for errors.
const PercentileNames = "pN with 0 < N < 100 (p50, p95, p99, p99.9, p99.99) or max"
