package report

import (
	"slices"
	"sort"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// EvidenceRows is how many of the slowest events a report shows per side.
const EvidenceRows = 3

// GrownRows is how many grown frames a report names per metric.
const GrownRows = 3

// Evidence is a regressed metric's slowest events on each side, from the
// trials of the compared Results, and the frames whose share of the
// stacks sampled in its slowest requests grew most.
type Evidence struct {
	Scenario, Metric string
	Base, Cand       []result.Event
	Grown            Grown
}

// Grown compares the stacks sampled while the requests beyond a gated
// percentile were open (result.Profile), candidate against baseline:
// each frame's share of a side's samples is the part whose innermost
// frame is that function (its self time), and Frames are the functions
// whose share grew most, most first, at most GrownRows of them.
type Grown struct {
	Quantile                 float64 // the percentile sampled, of the candidate's trials
	BaseSamples, CandSamples int
	Frames                   []FrameShare
}

// FrameShare is a function's share of each side's samples, 0 to 1.
type FrameShare struct {
	Function   string
	Kernel     bool
	Base, Cand float64
}

// Growth is how much the function's share grew, in shares (0.5 is 50
// points).
func (f FrameShare) Growth() float64 { return f.Cand - f.Base }

// Function is a frame's function: its name without the +0xOFFSET the
// symbolizer adds.
func Function(frame string) string {
	if i := strings.LastIndex(frame, "+0x"); i > 0 {
		return frame[:i]
	}
	return frame
}

// Leaf is where a stack sample was taken: its innermost frame's function,
// the kernel's if it was taken in the kernel.
func Leaf(st result.StackSample) (fn string, kernel bool) {
	switch {
	case len(st.Kernel) > 0:
		return Function(st.Kernel[0]), true
	case len(st.User) > 0:
		return Function(st.User[0]), false
	}
	return "[unknown]", false
}

type leafKey struct {
	fn     string
	kernel bool
}

// selfShares counts the samples of a scenario's metric in res by their
// innermost function; the percentile sampled (0 with no profile).
func selfShares(res *result.Result, scenario, metric string) (map[leafKey]int, int, float64) {
	out := map[leafKey]int{}
	n, q := 0, 0.0
	for _, t := range Profiles(res, scenario, metric) {
		q = t.Quantile
		for _, st := range t.Samples {
			fn, k := Leaf(st)
			out[leafKey{fn, k}] += st.Count
			n += st.Count
		}
	}
	return out, n, q
}

// Profiles returns the profiles of a scenario's metric over the trials of
// res, in order.
func Profiles(res *result.Result, scenario, metric string) []*result.Profile {
	if res == nil {
		return nil
	}
	var out []*result.Profile
	for _, s := range res.Scenarios {
		if s.Name != scenario || s.Metrics[metric] == nil {
			continue
		}
		for _, t := range s.Metrics[metric].Trials {
			if t.Profile != nil {
				out = append(out, t.Profile)
			}
		}
	}
	return out
}

// GrownFrames compares the samples of a scenario's metric in base and
// cand: the n functions whose self share grew most (by at least one
// point), most first. Zero with no samples on a side.
func GrownFrames(base, cand *result.Result, scenario, metric string, n int) Grown {
	bs, bn, _ := selfShares(base, scenario, metric)
	cs, cn, q := selfShares(cand, scenario, metric)
	g := Grown{Quantile: q, BaseSamples: bn, CandSamples: cn}
	if bn == 0 || cn == 0 {
		return g
	}
	for k, c := range cs {
		f := FrameShare{Function: k.fn, Kernel: k.kernel, Base: float64(bs[k]) / float64(bn), Cand: float64(c) / float64(cn)}
		if f.Growth() >= 0.01 {
			g.Frames = append(g.Frames, f)
		}
	}
	sort.Slice(g.Frames, func(i, j int) bool {
		a, b := g.Frames[i], g.Frames[j]
		if a.Growth() != b.Growth() {
			return a.Growth() > b.Growth()
		}
		return a.Function < b.Function
	})
	if len(g.Frames) > n {
		g.Frames = g.Frames[:n]
	}
	return g
}

// RegressionEvidence returns the evidence of every metric with a
// regression verdict, when the compared Results carry it.
func (r *Report) RegressionEvidence() []Evidence {
	var out []Evidence
	for _, s := range r.Scenarios {
		var metrics []string
		for _, v := range s.Verdicts {
			if v.Kind == stats.Regression && !slices.Contains(metrics, v.Metric) {
				metrics = append(metrics, v.Metric)
			}
		}
		for _, m := range metrics {
			e := Evidence{
				Scenario: s.Name, Metric: m,
				Base:  SlowestEvents(r.BaseResult, s.Name, m, EvidenceRows),
				Cand:  SlowestEvents(r.CandResult, s.Name, m, EvidenceRows),
				Grown: GrownFrames(r.BaseResult, r.CandResult, s.Name, m, GrownRows),
			}
			if len(e.Base)+len(e.Cand) > 0 || e.Grown.BaseSamples+e.Grown.CandSamples > 0 {
				out = append(out, e)
			}
		}
	}
	return out
}

// SlowestEvents returns the n slowest events of a scenario's metric over
// all trials of res.
func SlowestEvents(res *result.Result, scenario, metric string, n int) []result.Event {
	if res == nil {
		return nil
	}
	var all []result.Event
	for _, s := range res.Scenarios {
		if s.Name != scenario || s.Metrics[metric] == nil {
			continue
		}
		for _, t := range s.Metrics[metric].Trials {
			all = append(all, t.Slowest...)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].LatencyNs > all[j].LatencyNs })
	if len(all) > n {
		all = all[:n]
	}
	return all
}
