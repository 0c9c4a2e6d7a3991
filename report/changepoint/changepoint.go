package changepoint

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	moremath "github.com/aclements/go-moremath/stats"
)

// Defaults of Options.
const (
	DefaultLevel   = 0.01
	DefaultMinSize = 3
	defaultStopAt  = 10
)

// Options control Detect.
type Options struct {
	// Level is the family-wise false-alarm rate over every series tested:
	// the chance that any step-free series gets a change point.
	Level float64
	// MinSize is the fewest commits on either side of a change point.
	MinSize int
	// MaxShuffles bounds each permutation test; 0 sizes it from the
	// smallest level Holm may test at, so that a p-value can reach it.
	MaxShuffles int
	// Seed makes the shuffles, and so the p-values, reproducible.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Level <= 0 {
		o.Level = DefaultLevel
	}
	if o.MinSize < 2 {
		o.MinSize = DefaultMinSize
	}
	return o
}

// Interval is a value with its 95% interval.
type Interval struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Side is the stretch of commits on one side of a change point, up to the
// next change point or the end: the median of its per-commit medians and
// the interval of that median, ns.
type Side struct {
	Interval
	Commits int `json:"commits"`
}

// Change is one change point: the first commit after the step.
type Change struct {
	Key    Key       `json:"key"`
	Gated  bool      `json:"gated"`
	Index  int       `json:"index"` // of Commit in the series
	Commit string    `json:"commit"`
	Prev   string    `json:"previous"` // the last commit before the step
	Time   time.Time `json:"time"`
	Before Side      `json:"before"`
	After  Side      `json:"after"`
	// Ratio is After / Before, with a bootstrap interval over the commits
	// of both sides.
	Ratio Interval `json:"ratio"`
	// P is the permutation test's p-value, Alpha the level it was tested
	// at (the family's level, split by Holm).
	P        float64 `json:"p"`
	Alpha    float64 `json:"alpha"`
	Shuffles int     `json:"shuffles"`
}

// Regression reports whether the step made the percentile slower.
func (c Change) Regression() bool { return c.Ratio.Center > 1 }

// Tested is one series as Detect saw it.
type Tested struct {
	Key     Key       `json:"key"`
	Gated   bool      `json:"gated"`
	Commits int       `json:"commits"`
	P       float64   `json:"p"`     // of its first split: what Holm ranks
	Alpha   float64   `json:"alpha"` // 0 when Holm stopped before it
	Changes []int     `json:"changes,omitempty"`
	Points  []Point   `json:"-"`
	Last    time.Time `json:"last"`
}

// WarningKind says what a Warning is about.
type WarningKind string

// Warning kinds.
const (
	// WarnShort: too few commits for a change point with MinSize on
	// either side; the series was not tested.
	WarnShort WarningKind = "short"
	// WarnFewTrials: a commit had fewer than six trials, so its interval
	// is the range of its trials, below 95%.
	WarnFewTrials WarningKind = "few-trials"
	// WarnUnreachable: the shuffles could not reach the level a test
	// needed; raise MaxShuffles.
	WarnUnreachable WarningKind = "unreachable"
	// WarnFewValues: the series has commits enough, but too few trials
	// in all for any split of them to reach the level (smallestP); it
	// was not tested.
	WarnFewValues WarningKind = "few-values"
)

// Warning is a doubt about a series, typed; renderers word it.
type Warning struct {
	Kind    WarningKind `json:"kind"`
	Key     Key         `json:"key"`
	Commit  string      `json:"commit,omitempty"`
	Commits int         `json:"commits,omitempty"` // how many (few-trials) or how many there are (short, few-values)
	Need    int         `json:"need,omitempty"`
	Trials  int         `json:"trials,omitempty"` // how many in all (few-values)
	Level   float64     `json:"level,omitempty"`  // the level it could not reach (few-values)
}

// Report is what Detect found.
type Report struct {
	Level   float64  `json:"level"`
	MinSize int      `json:"min_size"`
	Series  []Tested `json:"series"`
	// Tested is how many of Series were tested: the others have too
	// few commits for a change point (a WarnShort each).
	Tested   int       `json:"tested"`
	Changes  []Change  `json:"changes"`
	Warnings []Warning `json:"warnings,omitempty"`
}

// Detect finds the change points of every series. Each series' first
// split is tested by permutation; Holm's step-down over those p-values
// holds the family-wise rate at opt.Level, so that ten metrics do not make
// ten times the false change points. A series Holm rejects is split
// further, each further split tested at the level Holm gave the series
// (under the null of that series there is no first split to reject).
func Detect(series []Series, opt Options) *Report {
	opt = opt.withDefaults()
	rep := &Report{Level: opt.Level, MinSize: opt.MinSize, Changes: []Change{}}
	tested := rep.admit(series, opt)
	m := len(tested)
	rep.Tested = m
	if m == 0 {
		return rep
	}
	shuffles := shufflesFor(opt, m)
	sp := &splitter{minSize: opt.MinSize}
	for _, st := range tested {
		st.testFirstSplit(sp, shuffles, opt.Level)
	}
	// Holm: the k-th smallest p (from 0) is tested at Level/(m−k), until
	// one fails.
	for k, st := range holmOrder(tested) {
		alpha := opt.Level / float64(m-k)
		if 1/float64(shuffles+1) > alpha {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnUnreachable, Key: st.t.Key, Need: int(math.Ceil(1 / alpha))})
		}
		if st.t.P > alpha {
			break
		}
		st.t.Alpha = alpha
		rep.addChanges(st, st.splitFurther(sp, alpha, shuffles), alpha)
	}
	rep.keepTested(tested)
	slices.SortStableFunc(rep.Changes, func(a, b Change) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return CompareKeys(a.Key, b.Key)
	})
	return rep
}

// testedSeries is a series long enough to test, as Detect works on it.
type testedSeries struct {
	t     Tested
	all   segment   // every trial's log quantile, commit after commit
	cx    []float64 // the log centres of its commits
	first split
	r     *rand.Rand
}

// admit lists every series in rep with its warnings and returns those long
// enough to test, each with a random source seeded from opt.Seed and its key.
func (rep *Report) admit(series []Series, opt Options) []*testedSeries {
	var tested []*testedSeries
	for _, s := range series {
		few := 0
		for _, p := range s.Points {
			if len(p.Trials) < 6 {
				few++
			}
		}
		if few > 0 {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnFewTrials, Key: s.Key, Commits: few})
		}
		st := &testedSeries{t: Tested{Key: s.Key, Gated: s.Gated, Commits: len(s.Points), P: 1, Points: s.Points}}
		if n := len(s.Points); n > 0 {
			st.t.Last = s.Points[n-1].Time
		}
		rep.Series = append(rep.Series, st.t)
		if len(s.Points) < 2*opt.MinSize {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnShort, Key: s.Key, Commits: len(s.Points), Need: 2 * opt.MinSize})
			continue
		}
		st.all, st.cx = trialValues(s.Points)
		if p := smallestP(st.all.bounds, opt.MinSize); p > opt.Level {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnFewValues, Key: s.Key, Commits: len(s.Points), Trials: len(st.all.x), Level: opt.Level})
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(s.Key.String()))
		st.r = rand.New(rand.NewPCG(opt.Seed, h.Sum64()))
		tested = append(tested, st)
	}
	return tested
}

// trialValues are the log quantiles of points' trials, commit after
// commit, as one segment, and the log centre of each commit. A point
// without trials (built by hand) counts its centre as its one trial.
func trialValues(points []Point) (segment, []float64) {
	var x []float64
	bounds := []int{0}
	cx := make([]float64, len(points))
	for i, p := range points {
		cx[i] = math.Log(math.Max(p.Center, 1e-9))
		if len(p.Trials) == 0 {
			x = append(x, cx[i])
		}
		for _, v := range p.Trials {
			x = append(x, math.Log(math.Max(v, 1e-9)))
		}
		bounds = append(bounds, len(x))
	}
	return newSegment(0, x, bounds), cx
}

// smallestP bounds from below the p-value a permutation test of a series
// with these commit bounds can reach: at the split that leaves most ways
// to deal its trials to the two sides, one way in C(N, τ) (fewer when
// values tie). A series whose bound is over the level cannot show a
// change point at it, however large the step: 8 commits of one trial
// each reach 1/C(8,4) = 1/70 at best.
func smallestP(bounds []int, minSize int) float64 {
	commits, n := len(bounds)-1, bounds[len(bounds)-1]
	best := math.Inf(1)
	for c := minSize; c <= commits-minSize; c++ {
		lg, _ := math.Lgamma(float64(n + 1))
		la, _ := math.Lgamma(float64(bounds[c] + 1))
		lb, _ := math.Lgamma(float64(n - bounds[c] + 1))
		best = math.Min(best, -(lg - la - lb))
	}
	return math.Exp(best)
}

// shufflesFor is how many shuffles each permutation test of m series may take.
func shufflesFor(opt Options, m int) int {
	if opt.MaxShuffles > 0 {
		return opt.MaxShuffles
	}
	// Enough for p = 1/(shuffles+1) to sit well below the smallest level
	// Holm tests at, Level/m.
	return int(math.Min(100000, math.Max(999, math.Ceil(5*float64(m)/opt.Level))))
}

// testFirstSplit finds the series' best split and its p-value, the one
// Holm ranks.
func (st *testedSeries) testFirstSplit(sp *splitter, shuffles int, level float64) {
	segs := []segment{st.all}
	st.first = sp.best(segs)
	if st.first.seg < 0 || st.first.q <= 0 {
		return
	}
	st.t.P, _ = st.splitP(sp, segs, st.first, shuffles, level)
}

// splitP tests split b of segs (chosen on the trials), at level alpha.
// The unit is the commit, since a run can move all of its trials at once
// (another day, another runner), and each commit is the log median of
// its trials. Two tests, the smaller p-value doubled (Bonferroni):
//
//   - the permutation test of E-divisive over the commits' centres,
//     exact when the commits are exchangeable, but never below about
//     1/C(n, n/2) for n commits (1/70 at 8);
//   - Student's t of the centres before the cut against those after,
//     two-sided, Bonferroni over the cuts the segment allows, which
//     reaches small p-values with few commits but assumes the centres
//     normal about each side's level. It is backed by the permutation
//     test of E-divisive over the trials, exact when the trials of the
//     segment are exchangeable whatever their commit (no run moved
//     them), and its p-value is the larger of the two: the t branch
//     holds its level if either assumption holds.
//
// The trials' test, the costly one (it shuffles every trial), runs only
// where it could lower the result: when t is below the commits'
// permutation p-value, that p-value is above its floor, and t could
// reach alpha; elsewhere the result is the same without it, or an upper
// bound above alpha. It returns the shuffles of the commits' test.
func (st *testedSeries) splitP(sp *splitter, segs []segment, b split, shuffles int, alpha float64) (float64, int) {
	s := segs[b.seg]
	cx := st.cx[s.start : s.start+s.commits()]
	pt := 1.0
	res, err := moremath.TwoSampleTTest(moremath.Sample{Xs: cx[:b.cut]}, moremath.Sample{Xs: cx[b.cut:]}, moremath.LocationDiffers)
	switch {
	case err == nil:
		pt = min(1, float64(s.commits()-2*sp.minSize+1)*res.P)
	case meanOf(cx[:b.cut]) != meanOf(cx[b.cut:]):
		// Zero variance: every commit of each side alike.
		pt = 0
	}
	cs := make([]segment, len(segs))
	for i, s := range segs {
		cs[i] = newSegment(s.start, st.cx[s.start:s.start+s.commits()], unitBounds(s.commits()))
	}
	pp, n := 1.0, 0
	if cb := sp.best(cs); cb.seg >= 0 && cb.q > 0 {
		pp, n = sp.permutationP(cs, cb.q, shuffles, defaultStopAt, st.r)
	}
	if pt < pp && pp > 1/float64(shuffles+1) && 2*pt <= alpha {
		ptr, _ := sp.permutationP(segs, b.q, shuffles, defaultStopAt, st.r)
		pt = max(pt, ptr)
	}
	return min(1, 2*min(pt, pp)), n
}

func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// holmOrder is the tested series by rising p-value, ties in their order.
func holmOrder(tested []*testedSeries) []*testedSeries {
	order := slices.Clone(tested)
	slices.SortStableFunc(order, func(a, b *testedSeries) int {
		switch {
		case a.t.P < b.t.P:
			return -1
		case a.t.P > b.t.P:
			return 1
		}
		return 0
	})
	return order
}

// foundSplit is a change point of one series: where, and its test.
type foundSplit struct {
	at       int
	p        float64
	shuffles int
}

// splitFurther starts from the first split, which Holm rejected, and
// splits the series' segments while the best further split holds at
// alpha. It returns the change points in commit order.
func (st *testedSeries) splitFurther(sp *splitter, alpha float64, shuffles int) []foundSplit {
	cut, n := st.first.cut, st.all.commits()
	cps := []foundSplit{{cut, st.t.P, 0}}
	segs := []segment{st.all.sub(0, cut), st.all.sub(cut, n)}
	for {
		b := sp.best(segs)
		if b.seg < 0 || b.q <= 0 {
			break
		}
		p, shuf := st.splitP(sp, segs, b, shuffles, alpha)
		if p > alpha {
			break
		}
		s := segs[b.seg]
		cps = append(cps, foundSplit{s.start + b.cut, p, shuf})
		segs = slices.Replace(segs, b.seg, b.seg+1, s.sub(0, b.cut), s.sub(b.cut, s.commits()))
	}
	slices.SortFunc(cps, func(a, b foundSplit) int { return a.at - b.at })
	return cps
}

// addChanges adds the series' change points cps to rep, each with the
// sides between its neighbours and the ratio of their medians.
func (rep *Report) addChanges(st *testedSeries, cps []foundSplit, alpha float64) {
	pts := st.t.Points
	for i, c := range cps {
		st.t.Changes = append(st.t.Changes, c.at)
		lo, hi := 0, len(st.cx)
		if i > 0 {
			lo = cps[i-1].at
		}
		if i+1 < len(cps) {
			hi = cps[i+1].at
		}
		rep.Changes = append(rep.Changes, Change{
			Key: st.t.Key, Gated: st.t.Gated, Index: c.at,
			Commit: pts[c.at].Commit, Prev: pts[c.at-1].Commit, Time: pts[c.at].Time,
			Before: side(st.cx[lo:c.at]), After: side(st.cx[c.at:hi]),
			Ratio: ratio(st.cx[lo:c.at], st.cx[c.at:hi], st.r),
			P:     c.p, Alpha: alpha, Shuffles: c.shuffles,
		})
	}
}

// keepTested puts what the tests found (p, alpha, change points) in
// rep's entries of the tested series.
func (rep *Report) keepTested(tested []*testedSeries) {
	for _, st := range tested {
		for j := range rep.Series {
			if rep.Series[j].Key == st.t.Key {
				rep.Series[j] = st.t
			}
		}
	}
}

// side summarizes log centers x: the median commit, in ns, and its
// distribution-free interval.
func side(x []float64) Side {
	med, lo, hi := MedianInterval(x, 0.95)
	return Side{Interval: Interval{Center: math.Exp(med), Lo: math.Exp(lo), Hi: math.Exp(hi)}, Commits: len(x)}
}

// ratio is exp(median(after) − median(before)) with a 95% percentile
// bootstrap interval, commits resampled on each side.
func ratio(before, after []float64, r *rand.Rand) Interval {
	const resamples = 2000
	med := func(x []float64) float64 { m, _, _ := MedianInterval(x, 0); return m }
	center := math.Exp(med(after) - med(before))
	ds := make([]float64, resamples)
	bb, ab := make([]float64, len(before)), make([]float64, len(after))
	for i := range ds {
		for j := range bb {
			bb[j] = before[r.IntN(len(before))]
		}
		for j := range ab {
			ab[j] = after[r.IntN(len(after))]
		}
		ds[i] = med(ab) - med(bb)
	}
	slices.Sort(ds)
	return Interval{Center: center, Lo: math.Exp(ds[int(0.025*resamples)]), Hi: math.Exp(ds[int(0.975*resamples)-1])}
}
