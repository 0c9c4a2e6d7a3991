package tracing

import (
	"testing"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

func TestExtremesFit(t *testing.T) {
	counts := make([]uint64, hist.Buckets)
	counts[hist.Bucket(100)] = 3
	counts[hist.Bucket(5000)] = 1
	tests := []struct {
		name     string
		min, max uint64
		want     bool
	}{
		{"exact", 100, 5000, true},
		{"within the edge buckets", 100, 5010, true},
		{"max beyond the last bucket", 100, 90000, false},
		{"min below the first bucket", 10, 5000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extremesFit(counts, tt.min, tt.max); got != tt.want {
				t.Errorf("extremesFit(%d, %d) = %v, want %v", tt.min, tt.max, got, tt.want)
			}
		})
	}
	if extremesFit(make([]uint64, hist.Buckets), 1, 1) {
		t.Error("empty histogram: extremes fit")
	}
}
