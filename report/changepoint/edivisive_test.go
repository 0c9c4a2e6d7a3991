package changepoint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteQ is Q(τ) straight from its definition.
func bruteQ(x []float64, tau int) float64 {
	n := len(x)
	var b, wl, wr float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := math.Abs(x[i] - x[j])
			switch {
			case j < tau:
				wl += d
			case i >= tau:
				wr += d
			default:
				b += d
			}
		}
	}
	m, k := float64(tau), float64(n-tau)
	return m * k / float64(n) * (2*b/(m*k) - wl/(m*(m-1)/2) - wr/(k*(k-1)/2))
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 6 + r.IntN(40)
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(r.NormFloat64()*4) / 4 // ties too
			if i > n/2 && trial%2 == 0 {
				x[i] += 2
			}
		}
		sp := &splitter{minSize: 3}
		s := newSegment(0, x, unitBounds(n))
		tau, q := sp.bestSplit(s.x, s.rank, s.bounds)
		wantTau, wantQ := 0, math.Inf(-1)
		for t := 3; t <= n-3; t++ {
			if v := bruteQ(x, t); v > wantQ {
				wantTau, wantQ = t, v
			}
		}
		if math.Abs(q-wantQ) > 1e-9*math.Max(1, math.Abs(wantQ)) || (tau != wantTau && math.Abs(bruteQ(x, tau)-wantQ) > 1e-9) {
			t.Fatalf("n=%d: bestSplit τ=%d Q=%g, by definition τ=%d Q=%g", n, tau, q, wantTau, wantQ)
		}
	}
}

func TestMedianInterval(t *testing.T) {
	// Coverage of the true median (0) of a normal, by simulation.
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{6, 10, 25} {
		covered := 0
		const runs = 4000
		for range runs {
			x := make([]float64, n)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			_, lo, hi := MedianInterval(x, 0.95)
			if lo <= 0 && 0 <= hi {
				covered++
			}
		}
		if c := float64(covered) / runs; c < 0.94 {
			t.Errorf("n=%d: the 95%% median interval covered %.3f", n, c)
		}
	}
}
