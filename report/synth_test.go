package report

import (
	"math"
	"math/rand/v2"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// synthetic describes a latency distribution for tests: lognormal around
// Median (ns) with shape Sigma, every value multiplied by Scale.
type synthetic struct {
	Median float64
	Sigma  float64
	Scale  float64
}

// trial draws one trial of about n events, binned straight into the
// histogram: each bucket's count is Poisson with the bucket's expected
// share of n, which is how independent events fall into buckets.
func (s synthetic) trial(r *rand.Rand, n float64) *hist.Histogram {
	h := hist.New()
	mu := math.Log(s.Median * s.Scale)
	cdf := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 0.5 * math.Erfc(-(math.Log(x)-mu)/(s.Sigma*math.Sqrt2))
	}
	lo := math.Exp(mu - 7*s.Sigma)
	hi := math.Exp(mu + 7*s.Sigma)
	first := hist.Bucket(uint64(lo))
	b, _ := hist.Bounds(first)
	below := cdf(float64(b))
	for i := first; i <= hist.Bucket(uint64(hi)); i++ {
		// Buckets are contiguous: one's upper edge is the next one's lower.
		b, w := hist.Bounds(i)
		upto := cdf(float64(b + w))
		h.AddBucket(i, poisson(r, n*(upto-below)))
		below = upto
	}
	return h
}

// trials draws k trials whose scales vary by spread (a fraction, as the
// standard deviation of a lognormal factor) around s.Scale.
func (s synthetic) trials(r *rand.Rand, k int, n, spread float64) []*hist.Histogram {
	out := make([]*hist.Histogram, k)
	for i := range out {
		t := s
		t.Scale = s.Scale * math.Exp(spread*r.NormFloat64())
		out[i] = t.trial(r, n)
	}
	return out
}

func merge(hs []*hist.Histogram) *hist.Histogram {
	m := hist.New()
	for _, h := range hs {
		m.Merge(h)
	}
	return m
}
