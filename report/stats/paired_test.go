package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteSignFlip enumerates every sign vector: the definition signFlipP
// computes by convolution.
func bruteSignFlip(d []float64) (up, down float64) {
	var abs []float64
	for _, x := range d {
		if x != 0 {
			abs = append(abs, math.Abs(x))
		}
	}
	n := len(abs)
	rank := func(a float64) float64 {
		lo, eq := 0, 0
		for _, b := range abs {
			if b < a {
				lo++
			} else if b == a {
				eq++
			}
		}
		return float64(lo) + float64(eq+1)/2
	}
	stat := func(signs uint) float64 {
		s := 0.0
		for i, a := range abs {
			if signs&(1<<i) != 0 {
				s += rank(a)
			}
		}
		return s
	}
	var obs uint
	i := 0
	for _, x := range d {
		if x > 0 {
			obs |= 1 << i
		}
		if x != 0 {
			i++
		}
	}
	w := stat(obs)
	total := 1 << n
	for v := range total {
		s := stat(uint(v))
		if s >= w-1e-9 {
			up++
		}
		if s <= w+1e-9 {
			down++
		}
	}
	return up / float64(total), down / float64(total)
}

func TestSignFlipPExact(t *testing.T) {
	for _, c := range []struct {
		name string
		d    []float64
	}{
		{"all up", []float64{0.1, 0.2, 0.3, 0.4, 0.5}},
		{"mixed", []float64{0.1, -0.2, 0.3, -0.05, 0.5, 0.25, -0.4}},
		{"ties and zeros", []float64{0.1, -0.1, 0.1, 0, 0.2, -0.2, 0, 0.1, 0.3}},
		{"one", []float64{-0.3}},
		{"only zeros", []float64{0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up, down := signFlipP(c.d)
			wu, wd := bruteSignFlip(c.d)
			if math.Abs(up-wu) > 1e-12 || math.Abs(down-wd) > 1e-12 {
				t.Errorf("signFlipP = %g, %g; enumeration %g, %g", up, down, wu, wd)
			}
		})
	}
}

// The Walsh-average bounds are the signed-rank test inverted: without
// ties, a shift δ below the lower bound at level a is exactly one the test
// of d−δ rejects at a.
func TestWalshBoundsInvertTheTest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{8, 12, 20} {
		d := make([]float64, n)
		for i := range d {
			d[i] = 0.1 + 0.15*r.NormFloat64()
		}
		p := newPaired(d)
		for _, a := range []float64{0.05, 0.01, 0.001} {
			lo, hi := p.lower(a), p.upper(a)
			for _, delta := range []float64{-0.3, -0.1, 0, 0.05, 0.1, 0.15, 0.3} {
				shifted := make([]float64, n)
				for i := range d {
					shifted[i] = d[i] - delta
				}
				up, down := signFlipP(shifted)
				if (up <= a) != (delta < lo) {
					t.Errorf("n=%d a=%g δ=%g: p up %g, lower bound %g", n, a, delta, up, lo)
				}
				if (down <= a) != (delta > hi) {
					t.Errorf("n=%d a=%g δ=%g: p down %g, upper bound %g", n, a, delta, down, hi)
				}
			}
		}
	}
}

// A signed-rank test over n rounds cannot go below 2^-n: the bounds say
// so rather than claim a level they cannot hold.
func TestPairedTooFewRounds(t *testing.T) {
	p := newPaired([]float64{0.5, 0.6, 0.7, 0.8, 0.9})
	if lo := p.lower(0.01); !math.IsInf(lo, -1) {
		t.Errorf("5 rounds at 1%%: lower bound %g, want -Inf (2^-5 > 1%%)", lo)
	}
	if got := minRoundsFor(0.01 / 11); got != 11 {
		t.Errorf("minRoundsFor(1%%/11) = %d, want 11", got)
	}
}
