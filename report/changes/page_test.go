package changes

import (
	"math"
	"testing"
)

// The axis always has two labels at least, inside its range, at values
// its three-digit labels spell exactly.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64 // ns
		want   []float64
	}{
		{"decades: 1, 2 and 5 of each", 800, 60000, []float64{1000, 2000, 5000, 10000, 20000, 50000}},
		{"within a decade", 512, 563, []float64{520, 530, 540, 550, 560}},
		{"one commit's ±5%", 18900, 21100, []float64{19000, 20000, 21000}},
		{"a half step", 1009.5, 1019.5, []float64{1010, 1015}},
		{"thinned to six at most", 1000.5, 1095.5, []float64{1010, 1030, 1050, 1070, 1090}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := logTicks(math.Log(c.lo), math.Log(c.hi))
			if len(got) != len(c.want) {
				t.Fatalf("ticks %v, want %v", got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-9*c.want[i] {
					t.Errorf("ticks %v, want %v", got, c.want)
					break
				}
			}
		})
	}
}
