// Package suggest finds the names nearest to a misspelt one, for errors
// that say "no such X; near: ...".
package suggest

import (
	"sort"
	"strings"
)

// Near returns up to n of candidates nearest to name, nearest first: those
// within a few edits of it (about one per four characters, at least two),
// and those that contain it or that it contains (clone → kernel_clone).
// Case is ignored. Duplicates are returned once.
func Near(name string, candidates []string, n int) []string {
	if n <= 0 || name == "" {
		return nil
	}
	lname := strings.ToLower(name)
	maxDist := max(2, len(name)/4)
	type match struct {
		name string
		dist int
	}
	var ms []match
	seen := map[string]bool{}
	for _, c := range candidates {
		if c == "" || seen[c] {
			continue
		}
		lc := strings.ToLower(c)
		d := -1
		switch {
		case lc == lname:
			d = 0
		case abs(len(lc)-len(lname)) <= maxDist:
			if e := distance(lname, lc, maxDist); e <= maxDist {
				d = e
			}
		}
		if d < 0 && len(lname) >= 3 && (strings.Contains(lc, lname) || (len(lc) >= 3 && strings.Contains(lname, lc))) {
			// A containing name ranks after the close spellings.
			d = maxDist + 1 + abs(len(lc)-len(lname))
		}
		if d >= 0 {
			seen[c] = true
			ms = append(ms, match{c, d})
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].dist != ms[j].dist {
			return ms[i].dist < ms[j].dist
		}
		if len(ms[i].name) != len(ms[j].name) {
			return len(ms[i].name) < len(ms[j].name)
		}
		return ms[i].name < ms[j].name
	})
	out := make([]string, 0, min(n, len(ms)))
	for _, m := range ms[:min(n, len(ms))] {
		out = append(out, m.name)
	}
	return out
}

// distance is the edit distance of a and b (insertions, deletions,
// substitutions and swaps of neighbours: "raed" is one edit from "read"),
// or limit+1 once it is known to exceed limit.
func distance(a, b string, limit int) int {
	pprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pprev[j-2]+1)
			}
			low = min(low, cur[j])
		}
		if low > limit {
			return limit + 1
		}
		pprev, prev, cur = prev, cur, pprev
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
