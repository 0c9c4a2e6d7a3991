// Package shard splits work deterministically over the jobs of a CI matrix:
// `--shard i/n` takes every n-th unit of the sorted work list, starting at
// the i-th. Every unit lands in exactly one shard, whatever order the units
// were named in.
package shard

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Spec is shard I of N, 1 ≤ I ≤ N. The zero Spec is "everything".
type Spec struct {
	I, N int
}

// Parse reads "i/n".
func Parse(s string) (Spec, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("shard %q: want i/n, e.g. 2/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return Spec{}, fmt.Errorf("shard %q: want 1 ≤ i ≤ n", s)
	}
	return Spec{I: i, N: n}, nil
}

func (s Spec) String() string {
	if s.N == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Select returns the indexes into keys of the units in this shard, in the
// order of keys. Units are dealt round-robin in sorted key order, so shards
// differ in size by at most one.
func (s Spec) Select(keys []string) []int {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	if s.N <= 1 {
		return idx
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	var out []int
	for pos, k := range idx {
		if pos%s.N == s.I-1 {
			out = append(out, k)
		}
	}
	sort.Ints(out)
	return out
}
