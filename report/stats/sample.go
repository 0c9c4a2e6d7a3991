package stats

import "github.com/tailgate-ci/tailgate/internal/hist"

// Trial is what the statistics see of one trial of a metric: its
// histogram, and what pairs it with the other side's trial, a same-job
// gate's round or a boot's seed in virtual time (0 for none).
type Trial struct {
	Histogram *hist.Histogram
	Round     int
	Seed      uint64
}

// Sample is one side's trials of a metric.
type Sample struct {
	Trials []Trial
}

// Merged is the sum of the trials' histograms.
func (s *Sample) Merged() *hist.Histogram {
	out := hist.New()
	for _, t := range s.Trials {
		if t.Histogram != nil {
			out.Merge(t.Histogram)
		}
	}
	return out
}

// Histograms returns the histograms of s's trials, those that have one:
// the samples the bootstrap resamples.
func (s *Sample) Histograms() []*hist.Histogram {
	var hs []*hist.Histogram
	for _, t := range s.Trials {
		if t.Histogram != nil {
			hs = append(hs, t.Histogram)
		}
	}
	return hs
}
