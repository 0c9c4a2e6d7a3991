package stats

import (
	"math"
	"testing"
)

func TestStudentT(t *testing.T) {
	for _, c := range []struct {
		x, df, tail float64
	}{
		{4.0321, 5, 0.005},
		{2.2281, 10, 0.025},
		{2.7638, 10, 0.01},
		{1, 1, 0.25},
		{0, 7, 0.5},
		{-2.2281, 10, 0.975},
		// Closed forms far in the tails, where 1 − CDF would lose every
		// digit: t₁ is Cauchy, t₂ has P(T > x) = (1 − x/√(x²+2))/2.
		{1e6, 1, 0.5 - math.Atan(1e6)/math.Pi},
		{300, 2, (1 - 300/math.Sqrt(300*300+2)) / 2},
		// Nearly normal: P(Z > 6) = 9.8659e-10.
		{6, 1e7, 9.8659e-10},
	} {
		got := tTail(c.x, c.df)
		if math.Abs(got-c.tail) > 2e-4*c.tail {
			t.Errorf("tTail(%g, %g) = %.6g, want %.6g", c.x, c.df, got, c.tail)
		}
		if c.tail < 0.5 {
			back := tQuantile(c.tail, c.df)
			if math.Abs(back-c.x) > 1e-3*c.x {
				t.Errorf("tQuantile(%.6g, %g) = %.6g, want %g", c.tail, c.df, back, c.x)
			}
		}
	}
	if !math.IsNaN(tTail(1, 0)) || !math.IsNaN(tQuantile(0, 5)) {
		t.Error("no NaN for df 0 or p 0")
	}
}

func TestChi2Quantile(t *testing.T) {
	for _, c := range []struct {
		p, df, want float64
	}{
		{0.1, 1, 0.015791},
		{0.1, 4, 1.063623},
		{0.1, 9, 4.168159},
		{0.9, 2, -2 * math.Log(0.1)},
		{0.5, 30, 29.3360},
	} {
		if got := chi2Quantile(c.p, c.df); math.Abs(got-c.want) > 1e-4*c.want {
			t.Errorf("chi2Quantile(%g, %g) = %.6g, want %.6g", c.p, c.df, got, c.want)
		}
	}
}
