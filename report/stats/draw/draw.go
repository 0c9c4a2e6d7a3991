// Package draw draws the random counts the bootstrap resamples with:
// Poisson and binomial, exact where the mean is small and by the normal
// approximation above, so that a draw costs one or a few uniform numbers.
package draw

import (
	"math"
	"math/rand/v2"
)

// Draws below this mean are exact; above it the normal approximation is
// within the bootstrap's own noise and costs one draw.
const exactBelow = 30

// Poisson draws from Poisson(lambda).
func Poisson(r *rand.Rand, lambda float64) uint64 {
	if lambda <= 0 {
		return 0
	}
	if lambda < exactBelow {
		limit := math.Exp(-lambda)
		var k uint64
		for p := r.Float64(); p > limit; p *= r.Float64() {
			k++
		}
		return k
	}
	x := math.Round(lambda + math.Sqrt(lambda)*r.NormFloat64())
	if x < 0 {
		return 0
	}
	return uint64(x)
}

// Binomial draws from Binomial(n, p).
func Binomial(r *rand.Rand, n uint64, p float64) uint64 {
	switch {
	case n == 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	case p > 0.5:
		return n - Binomial(r, n, 1-p)
	}
	if n <= 16 {
		// Few events: counting Bernoulli trials beats any transcendental.
		var k uint64
		for range n {
			if r.Float64() < p {
				k++
			}
		}
		return k
	}
	mean := float64(n) * p
	if mean < exactBelow {
		// Inversion: walk the pmf from 0 until it covers a uniform draw.
		f := math.Exp(float64(n) * math.Log1p(-p))
		odds := p / (1 - p)
		u := r.Float64()
		var k uint64
		for u > f && k < n {
			u -= f
			f *= odds * float64(n-k) / float64(k+1)
			k++
			if f == 0 {
				break
			}
		}
		return k
	}
	x := math.Round(mean + math.Sqrt(mean*(1-p))*r.NormFloat64())
	return uint64(min(max(x, 0), float64(n)))
}
