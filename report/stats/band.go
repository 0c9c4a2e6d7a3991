package stats

import (
	"math"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Seeds in virtual time: a boot's seed draws its guest's layout and its
// workload's start phase (result.Trial.Seed), so that a side's boots are
// draws over what a change should not matter to, and a gate's sides share
// seed i in round i (common random numbers).
//
// The nuisance band of a metric's percentile is how far it moves across
// seeds alone: the largest distance, on the log scale, of a boot's
// quantile from the median of its side's boots, over both sides. Within
// the band a shift is what the seeds make of one system; a threshold
// inside it cannot be told from layout and phase, whatever the number of
// seeds, so such a test is never decided either way (HoldInsideBands).

// Band is the nuisance band of one metric's percentile.
type Band struct {
	// Spread is the band on the log scale: the largest |log(boot's
	// quantile / its side's median)|.
	Spread float64
	// Seeds are the seeded boots behind it, both sides.
	Seeds int
}

// MinBandSeeds is the fewest seeds of a side that give a band: with one a
// side shows no spread at all.
const MinBandSeeds = 2

// WarnNuisanceBand: the nuisance band of a gated test (Scenario, Metric,
// Percentile) is Band, across BaseCount seeded boots.
const WarnNuisanceBand WarningKind = "nuisance band"

// WarnInsideBand: the threshold of a gated test (Metric, Percentile,
// Scenario) is inside its nuisance band (Band, across BaseCount seeds),
// so the test is not decided either way.
const WarnInsideBand WarningKind = "threshold inside the nuisance band"

// NuisanceBand is the band of one percentile from each side's quantile
// per seeded boot (ns); a side of fewer than MinBandSeeds boots adds
// nothing. Seeds counts every boot given.
func NuisanceBand(sides ...[]float64) Band {
	var b Band
	for _, qs := range sides {
		b.Seeds += len(qs)
		var logs []float64
		for _, q := range qs {
			if q > 0 {
				logs = append(logs, math.Log(q))
			}
		}
		if len(logs) < MinBandSeeds {
			continue
		}
		slices.Sort(logs)
		mid := logs[len(logs)/2]
		if len(logs)%2 == 0 {
			mid = (logs[len(logs)/2-1] + mid) / 2
		}
		b.Spread = math.Max(b.Spread, math.Max(mid-logs[0], logs[len(logs)-1]-mid))
	}
	return b
}

// Fraction is the band as a fraction: ±Fraction around a side's median.
func (b Band) Fraction() float64 { return math.Expm1(b.Spread) }

// Known says the band rests on seeds enough to be said.
func (b Band) Known() bool { return b.Seeds >= 2*MinBandSeeds }

// Covers says threshold t (a fraction) lies inside the band: a shift of
// t is within what the seeds alone move. A band no wider than a
// histogram bucket (what a boot's quantile can tell) covers nothing.
func (b Band) Covers(t float64) bool {
	return b.Known() && b.Spread > bootResolution && math.Log1p(t) <= b.Spread
}

// SeededQuantiles is each seeded trial's q-quantile of m (ns), and
// whether every trial of m is seeded, once each.
func SeededQuantiles(m *result.Metric, q float64) ([]float64, bool) {
	if m == nil || len(m.Trials) == 0 {
		return nil, false
	}
	seen := map[uint64]bool{}
	var out []float64
	for _, t := range m.Trials {
		if t.Seed == 0 || seen[t.Seed] {
			return nil, false
		}
		seen[t.Seed] = true
		if t.Histogram != nil && t.Histogram.Count() > 0 {
			out = append(out, t.Histogram.Quantile(q))
		}
	}
	return out, true
}

// CompareSeeds estimates every percentile of a metric from two sets of
// seeded boots in virtual time paired by seed, as ComparePaired pairs a
// gate's rounds (the sign-flip test over each seed's log ratio), the
// bounds widened by a bucket as a boot's are (CompareBoots), and gives
// each verdict its nuisance band (Verdict.Band). ok is false unless
// every trial of both sides is seeded and they share a seed.
func CompareSeeds(metric string, base, cand *result.Metric, pcts []Percentile, threshold func(Percentile) (float64, bool)) ([]Verdict, bool) {
	pairs, ok := pairBy(base, cand, func(t result.Trial) uint64 { return t.Seed })
	if !ok {
		return nil, false
	}
	vs := comparePairs(metric, base, cand, pairs, pcts, threshold, bootResolution)
	for i := range vs {
		bq, _ := SeededQuantiles(base, pcts[i].Q)
		cq, _ := SeededQuantiles(cand, pcts[i].Q)
		band := NuisanceBand(bq, cq)
		vs[i].Band = &band
	}
	return vs, true
}

// InsideBand says v is a gated test whose threshold lies inside its
// nuisance band.
func (v Verdict) InsideBand() bool {
	return v.Gated && v.Band != nil && v.Band.Covers(v.Threshold)
}

// HoldInsideBands keeps every verdict of vs whose threshold lies inside
// its nuisance band undecided, after its family judged it: inconclusive,
// with nothing more to settle it, and a WarnInsideBand saying why.
func HoldInsideBands(vs []*Verdict) {
	for _, v := range vs {
		if !v.InsideBand() {
			continue
		}
		v.Kind, v.TrialsToSettle = Inconclusive, 0
		v.Warnings = append(v.Warnings, Warning{Kind: WarnInsideBand, Metric: v.Metric, Percentile: v.Quantile, BaseCount: v.Band.Seeds, Band: v.Band.Fraction()})
	}
}
