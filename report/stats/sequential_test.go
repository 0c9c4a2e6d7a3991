package stats

import (
	"math"
	"testing"
)

func TestSequentialSpending(t *testing.T) {
	s := Sequential{Alpha: 0.01, Beta: 0.05}
	if s.AlphaAt(0) != 0.01 || s.BetaAt(0) != 0.05 {
		t.Errorf("look 0 spends %g and %g, want all of 0.01 and 0.05", s.AlphaAt(0), s.BetaAt(0))
	}
	var a, b float64
	for k := 1; k <= 1_000_000; k++ {
		a += s.AlphaAt(k)
		b += s.BetaAt(k)
		if k > 1 && s.AlphaAt(k) >= s.AlphaAt(k-1) {
			t.Fatalf("look %d spends %g, not less than look %d", k, s.AlphaAt(k), k-1)
		}
	}
	if a > 0.01 || a < 0.01*(1-1e-5) || b > 0.05 || b < 0.05*(1-1e-5) {
		t.Errorf("a million looks spend %.8g and %.8g, want just under 0.01 and 0.05", a, b)
	}
	if got := (Sequential{}).AlphaAt(1); math.Abs(got-DefaultAlpha*6/(math.Pi*math.Pi)) > 1e-15 {
		t.Errorf("default alpha at look 1 = %g", got)
	}
	planned := Sequential{Alpha: 0.01, Looks: 8}
	a = 0
	for k := 1; k <= 8; k++ {
		a += planned.AlphaAt(k)
		if k > 1 && planned.AlphaAt(k) <= planned.AlphaAt(k-1) {
			t.Errorf("planned: look %d spends %g, not more than look %d", k, planned.AlphaAt(k), k-1)
		}
	}
	if math.Abs(a-0.01) > 1e-15 || planned.AlphaAt(9) != 0 || planned.BetaAt(9) != 0 {
		t.Errorf("8 planned looks spend %g, a 9th %g", a, planned.AlphaAt(9))
	}
	var looks []int
	for round := 1; round <= 20; round++ {
		if k := s.LookAt(round); k > 0 {
			looks = append(looks, round, k)
		}
	}
	want := []int{6, 1, 8, 2, 10, 3, 12, 4, 14, 5, 16, 6, 18, 7, 20, 8}
	if len(looks) != len(want) {
		t.Fatalf("looks (round, look) %v, want %v", looks, want)
	}
	for i := range want {
		if looks[i] != want[i] {
			t.Fatalf("looks (round, look) %v, want %v", looks, want)
		}
	}
}
