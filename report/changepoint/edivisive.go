package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
)

// E-divisive means with the end of each segment fixed, as Otava and
// MongoDB run it: a segment x[0:n] splits at the τ that maximizes
//
//	Q(τ) = m·k/n · ( 2/(m·k) Σ_{i<τ≤j} |x_i−x_j| − W_L/C(m,2) − W_R/C(k,2) )
//
// (m = τ, k = n−τ, W the within sums of |x_i−x_j| over pairs), the
// scaled energy distance between the two sides with α = 1. The sums come
// from a Fenwick tree over the values' ranks, O(n log n) per segment, so
// that a permutation test of thousands of shuffles stays cheap at 1,000
// commits. Ranks do not change when a segment is shuffled, so they are
// taken once. The values are the trials' log quantiles in commit order,
// and a segment splits only between two commits: τ is a commit boundary.

// segment is a stretch of a series between change points, with its
// values' ranks and where its commits start.
type segment struct {
	start int       // index of its first commit in the series
	x     []float64 // log trial quantiles, commit after commit
	rank  []int     // 1-based rank of each x among the segment's
	// bounds[c] is the index in x of its commit c's first trial;
	// bounds[len(bounds)-1] is len(x).
	bounds []int
}

// commits is how many commits s holds.
func (s segment) commits() int { return len(s.bounds) - 1 }

// sub is the segment of s's commits [from, to).
func (s segment) sub(from, to int) segment {
	lo, hi := s.bounds[from], s.bounds[to]
	b := make([]int, to-from+1)
	for i := range b {
		b[i] = s.bounds[from+i] - lo
	}
	return newSegment(s.start+from, s.x[lo:hi], b)
}

func newSegment(start int, x []float64, bounds []int) segment {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	rank := make([]int, len(x))
	for r, i := range idx {
		rank[i] = r + 1
	}
	return segment{start: start, x: x, rank: rank, bounds: bounds}
}

// unitBounds are the bounds of n commits of one value each.
func unitBounds(n int) []int {
	b := make([]int, n+1)
	for i := range b {
		b[i] = i
	}
	return b
}

// splitter holds the scratch space of bestSplit.
type splitter struct {
	cnt     []int
	sum     []float64
	wl, wr  []float64
	minSize int
	xs      []float64
	rs      []int
}

// grow makes the scratch space fit a segment of n.
func (sp *splitter) grow(n int) {
	if cap(sp.cnt) < n+1 {
		sp.cnt, sp.sum = make([]int, n+1), make([]float64, n+1)
		sp.wl, sp.wr = make([]float64, n+1), make([]float64, n+1)
		sp.xs, sp.rs = make([]float64, n), make([]int, n)
	}
	sp.cnt, sp.sum = sp.cnt[:n+1], sp.sum[:n+1]
	sp.wl, sp.wr = sp.wl[:n+1], sp.wr[:n+1]
	sp.xs, sp.rs = sp.xs[:n], sp.rs[:n]
}

// within fills w[t] with Σ |x_i−x_j| over pairs i<j<t of x (in the order
// given) for t = 0..n.
func (sp *splitter) within(x []float64, rank []int, w []float64) {
	n := len(x)
	clear(sp.cnt)
	clear(sp.sum)
	var cntAll int
	var sumAll float64
	w[0] = 0
	for t := 0; t < n; t++ {
		// Below: inserted values of lower rank.
		c, s := 0, 0.0
		for i := rank[t]; i > 0; i -= i & -i {
			c += sp.cnt[i]
			s += sp.sum[i]
		}
		d := float64(c)*x[t] - s + (sumAll - s) - float64(cntAll-c)*x[t]
		w[t+1] = w[t] + d
		for i := rank[t]; i <= n; i += i & -i {
			sp.cnt[i]++
			sp.sum[i] += x[t]
		}
		cntAll++
		sumAll += x[t]
	}
}

// bestSplit returns the commit c (both sides at least minSize commits)
// whose boundary τ = bounds[c] maximizes Q, and Q there; c = 0 when the
// segment is too short.
func (sp *splitter) bestSplit(x []float64, rank []int, bounds []int) (c int, q float64) {
	n := len(x)
	commits := len(bounds) - 1
	if commits < 2*sp.minSize {
		return 0, 0
	}
	sp.grow(n)
	sp.within(x, rank, sp.wl)
	// The right-hand sums: the same pass over the reversed segment.
	xs, rs := sp.xs, sp.rs
	for i := range n {
		xs[i], rs[i] = x[n-1-i], rank[n-1-i]
	}
	sp.within(xs, rs, sp.wr)
	total := sp.wl[n]
	q = math.Inf(-1)
	for ci := sp.minSize; ci <= commits-sp.minSize; ci++ {
		t := bounds[ci]
		m, k := float64(t), float64(n-t)
		wl, wrr := sp.wl[t], sp.wr[n-t]
		between := total - wl - wrr
		e := 2 * between / (m * k)
		if t > 1 {
			e -= wl / (m * (m - 1) / 2)
		}
		if n-t > 1 {
			e -= wrr / (k * (k - 1) / 2)
		}
		if v := m * k / float64(n) * e; v > q {
			c, q = ci, v
		}
	}
	return c, q
}

// split is the best split over a set of segments.
type split struct {
	seg int // which segment
	cut int // the commit, within it, the second side starts at
	q   float64
}

func (sp *splitter) best(segs []segment) split {
	b := split{seg: -1, q: math.Inf(-1)}
	for i, s := range segs {
		if c, q := sp.bestSplit(s.x, s.rank, s.bounds); c > 0 && q > b.q {
			b = split{seg: i, cut: c, q: q}
		}
	}
	return b
}

// permutationP tests the best split's Q against the segments each
// shuffled at random, trials across the segment's commits (the null: no
// change inside any of them, and so every trial of a segment drawn from
// one distribution, whatever its commit), taking the
// largest Q over the segments as the observed one is. It stops early
// (Besag and Clifford's sequential p-value) once stopAt shuffles have
// reached the observed Q, so a series without a step costs few shuffles;
// otherwise it runs max shuffles. The p-value is valid either way.
func (sp *splitter) permutationP(segs []segment, observed float64, max, stopAt int, r *rand.Rand) (p float64, shuffles int) {
	perm := make([]segment, len(segs))
	for i, s := range segs {
		perm[i] = segment{start: s.start, x: slices.Clone(s.x), rank: slices.Clone(s.rank), bounds: s.bounds}
	}
	hits := 0
	for shuffles = 1; shuffles <= max; shuffles++ {
		qmax := math.Inf(-1)
		for _, s := range perm {
			r.Shuffle(len(s.x), func(i, j int) {
				s.x[i], s.x[j] = s.x[j], s.x[i]
				s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
			})
			if c, q := sp.bestSplit(s.x, s.rank, s.bounds); c > 0 && q > qmax {
				qmax = q
			}
		}
		// Relative slack: Q is a sum of floats in another order.
		if qmax >= observed*(1-1e-12) {
			hits++
			if hits >= stopAt {
				return float64(hits) / float64(shuffles), shuffles
			}
		}
	}
	return float64(hits+1) / float64(max+1), max
}
