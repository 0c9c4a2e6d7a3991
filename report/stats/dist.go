package stats

import "math"

// The distributions the verdicts refer to: Student's t for the p-values
// and intervals, χ² for the calibration's upper bounds. Tail
// probabilities are computed directly, not as 1 − CDF, so that p-values
// far below 1/resamples keep their digits.

// tTail returns P(T > t) for Student's t with df degrees of freedom.
func tTail(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || math.IsNaN(df) || df <= 0:
		return math.NaN()
	case math.IsInf(t, 1):
		return 0
	case math.IsInf(t, -1):
		return 1
	case t < 0:
		return 1 - tTail(-t, df)
	}
	// P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2).
	x := df / (df + t*t)
	return 0.5 * incBeta(x, df/2, 0.5)
}

// tQuantile returns the t with P(T > t) = p, for 0 < p < 1.
func tQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || math.IsNaN(df) || df <= 0 || p <= 0 || p >= 1:
		return math.NaN()
	case p == 0.5:
		return 0
	case p > 0.5:
		return -tQuantile(1-p, df)
	}
	// tTail falls from 1/2 at 0: bracket, then bisect (to float precision
	// it converges in well under 200 halvings).
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > p {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if tTail(mid, df) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// chi2Quantile returns the x with P(X ≤ x) = p for χ² with df degrees of
// freedom.
func chi2Quantile(p, df float64) float64 {
	if math.IsNaN(p) || df <= 0 || p <= 0 || p >= 1 {
		return math.NaN()
	}
	cdf := func(x float64) float64 { return incGammaLower(df/2, x/2) }
	lo, hi := 0.0, math.Max(1, df)
	for cdf(hi) < p {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (modified Lentz), on the side where that converges
// fast.
func incBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	if x > (a+1)/(a+b+2) {
		return 1 - incBeta(1-x, b, a)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) + lab - la - lb)
	return front * betaFraction(x, a, b) / a
}

func betaFraction(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	// step takes the fraction's next term, num, into c and d (Lentz's
	// method) and returns the factor it brings to f.
	step := func(num float64) float64 {
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 1000; m++ {
		m := float64(m)
		// Even step, then odd step, of the fraction's terms.
		f *= step(m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)))
		odd := step(-(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1)))
		f *= odd
		if math.Abs(odd-1) < 1e-15 {
			break
		}
	}
	return f
}

// incGammaLower is the regularized lower incomplete gamma function P(a, x):
// its series below a+1, its continued fraction above.
func incGammaLower(a, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(a*math.Log(x) - x - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 10000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if term < sum*1e-16 {
				break
			}
		}
		return front * sum
	}
	// Q(a, x) by Lentz's method on its continued fraction.
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		step := d * c
		h *= step
		if math.Abs(step-1) < 1e-16 {
			break
		}
	}
	return 1 - front*h
}
