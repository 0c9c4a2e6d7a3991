package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestWalshCentre(t *testing.T) {
	w := make([]float64, 0, 16)
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 2}, 1.5},
		// Walsh averages 1, 1.5, 2, 2, 2.5, 3, 50.5, 51, 51.5, 100: the
		// median (2.5+3)/2, where the mean is 26.5.
		{[]float64{1, 2, 3, 100}, 2.75},
		{[]float64{0, 0, 0, 10}, 0},
	} {
		if got := walshCentre(c.xs, w); got != c.want {
			t.Errorf("walshCentre(%v) = %g, want %g", c.xs, got, c.want)
		}
	}
	if got := walshCentre(nil, w); !math.IsNaN(got) {
		t.Errorf("walshCentre(nil) = %g, want NaN", got)
	}
}

// walshCentre's selection agrees with a sort on random samples, ties
// included.
func TestWalshCentreSelects(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 0, 64*65/2)
	for n := 1; n <= 64; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(r.NormFloat64() * 4)
		}
		var all []float64
		for i := range xs {
			for j := i; j < n; j++ {
				all = append(all, (xs[i]+xs[j])/2)
			}
		}
		slices.Sort(all)
		m := len(all)
		want := all[m/2]
		if m%2 == 0 {
			want = (all[m/2-1] + all[m/2]) / 2
		}
		if got := walshCentre(xs, w); got != want {
			t.Fatalf("n=%d: walshCentre = %g, sorted median %g", n, got, want)
		}
	}
}

func BenchmarkTrialCentre(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	for b.Loop() {
		trialCentre(xs, r, DefaultResamples)
	}
}
