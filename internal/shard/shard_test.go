package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestEveryUnitExactlyOnce(t *testing.T) {
	for units := 0; units <= 20; units++ {
		keys := make([]string, units)
		for i := range keys {
			keys[i] = fmt.Sprintf("scenario-%02d@target-%d", (i*7)%units, i%3)
		}
		for n := 1; n <= 8; n++ {
			seen := make(map[int]int)
			sizes := make([]int, 0, n)
			for i := 1; i <= n; i++ {
				sel := Spec{I: i, N: n}.Select(keys)
				sizes = append(sizes, len(sel))
				for _, k := range sel {
					seen[k]++
				}
			}
			for k := range keys {
				if seen[k] != 1 {
					t.Fatalf("units=%d n=%d: unit %d in %d shards", units, n, k, seen[k])
				}
			}
			lo, hi := units, 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			if hi-lo > 1 {
				t.Errorf("units=%d n=%d: shard sizes %v differ by more than one", units, n, sizes)
			}
		}
	}
}

func TestOrderIndependent(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g"}
	want := map[string]bool{}
	for _, k := range (Spec{I: 2, N: 3}).Select(keys) {
		want[keys[k]] = true
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		got := map[string]bool{}
		for _, k := range (Spec{I: 2, N: 3}).Select(keys) {
			got[keys[k]] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("shard 2/3 of %v is %v, want %v", keys, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr bool
	}{
		{"1/1", Spec{1, 1}, false},
		{"3/8", Spec{3, 8}, false},
		{"0/2", Spec{}, true},
		{"3/2", Spec{}, true},
		{"2", Spec{}, true},
		{"a/b", Spec{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Parse(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
