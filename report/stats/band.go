package stats

import (
	"cmp"
	"math"
	"slices"
)

// Seeds in virtual time: a boot's seed draws its guest's layout and its
// workload's start phase (Trial.Seed), so that a side's boots are
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

// SeedUnits returns m with one trial per seed, in seed order: the trials
// that share a seed (the phases of one layout) merged into one. A seed is
// the unit of a comparison in virtual time: what its trials share, their
// layout, is the larger nuisance, so trials of one seed are not
// independent draws. ok is false unless every trial of m is seeded.
func SeedUnits(m *Sample) (*Sample, bool) {
	if m == nil || len(m.Trials) == 0 {
		return nil, false
	}
	at := map[uint64]int{}
	out := &Sample{}
	for _, t := range m.Trials {
		if t.Seed == 0 {
			return nil, false
		}
		i, seen := at[t.Seed]
		if !seen {
			at[t.Seed] = len(out.Trials)
			u := t
			if t.Histogram != nil {
				u.Histogram = t.Histogram.Clone()
			}
			out.Trials = append(out.Trials, u)
			continue
		}
		u := &out.Trials[i]
		switch {
		case u.Histogram == nil:
			u.Histogram = t.Histogram
		case t.Histogram != nil:
			u.Histogram.Merge(t.Histogram)
		}
	}
	slices.SortFunc(out.Trials, func(a, b Trial) int { return cmp.Compare(a.Seed, b.Seed) })
	return out, true
}

// SeededQuantiles is each seed's q-quantile of m (ns), its trials merged
// (SeedUnits), and whether every trial of m is seeded.
func SeededQuantiles(m *Sample, q float64) ([]float64, bool) {
	u, ok := SeedUnits(m)
	if !ok {
		return nil, false
	}
	var out []float64
	for _, t := range u.Trials {
		if t.Histogram != nil && t.Histogram.Count() > 0 {
			out = append(out, t.Histogram.Quantile(q))
		}
	}
	return out, true
}

// CompareSeeds estimates every percentile of a metric from two sets of
// seeded boots in virtual time, one unit a seed (SeedUnits), and gives
// each verdict its nuisance band (Verdict.Band). Where the sides' seeds
// are common draws (paired: the guests were given the same bytes, so
// seed i drew the same layout on both) the units are paired by seed, as
// ComparePaired pairs a gate's rounds, the bounds widened by a bucket;
// otherwise each side's seeds are draws of their own, pairing buys no
// variance and costs units (a signed-rank test over n pairs reaches no
// p-value below 2^-n, the rank-sum test over n a side 1/C(2n, n)), and
// they are compared as two samples (CompareBoots). ok is false unless
// every trial of both sides is seeded (and, paired, they share a seed).
func CompareSeeds(metric string, base, cand *Sample, pcts []Percentile, threshold func(Percentile) (float64, bool), paired bool) ([]Verdict, bool) {
	bu, okb := SeedUnits(base)
	cu, okc := SeedUnits(cand)
	if !okb || !okc {
		return nil, false
	}
	var vs []Verdict
	if paired {
		pairs, ok := pairBy(bu, cu, func(t Trial) uint64 { return t.Seed })
		if !ok {
			return nil, false
		}
		vs = comparePairs(metric, bu, cu, pairs, pcts, threshold, bootResolution)
	} else {
		vs = CompareBoots(metric, bu, cu, pcts, threshold)
	}
	for i := range vs {
		bq, _ := SeededQuantiles(bu, pcts[i].Q)
		cq, _ := SeededQuantiles(cu, pcts[i].Q)
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
