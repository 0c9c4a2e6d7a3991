package draw

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPoissonBinomialMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.5, 3, 29, 31, 1000} {
		var s, s2 float64
		const n = 200000
		for range n {
			x := float64(Poisson(r, lambda))
			s += x
			s2 += x * x
		}
		mean, vr := s/n, s2/n-(s/n)*(s/n)
		if math.Abs(mean-lambda) > 0.02*lambda+0.02 || math.Abs(vr-lambda) > 0.05*lambda+0.05 {
			t.Errorf("poisson(%g): mean %g var %g", lambda, mean, vr)
		}
	}
	for _, c := range []struct {
		n uint64
		p float64
	}{{10, 0.3}, {100, 0.01}, {1000, 0.02}, {1000, 0.5}, {50000, 0.999}, {7, 1}, {7, 0}} {
		var s, s2 float64
		const k = 100000
		for range k {
			x := float64(Binomial(r, c.n, c.p))
			if x > float64(c.n) {
				t.Fatalf("binomial(%d,%g) = %g > n", c.n, c.p, x)
			}
			s += x
			s2 += x * x
		}
		mean, vr := s/k, s2/k-(s/k)*(s/k)
		wm, wv := float64(c.n)*c.p, float64(c.n)*c.p*(1-c.p)
		if math.Abs(mean-wm) > 0.02*wm+0.02 || math.Abs(vr-wv) > 0.06*wv+0.05 {
			t.Errorf("binomial(%d,%g): mean %g (want %g) var %g (want %g)", c.n, c.p, mean, wm, vr, wv)
		}
	}
}
