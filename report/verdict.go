package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// Kind is what a comparison concluded about one metric and percentile.
type Kind string

// Kinds of verdict.
const (
	NoChange     Kind = "no change"
	Regression   Kind = "regression"
	Improvement  Kind = "improvement"
	Inconclusive Kind = "inconclusive"
	// NotGated is reported for percentiles without a threshold (max by
	// default): the numbers are shown, nothing is judged.
	NotGated Kind = "not gated"
)

// MinTailEvents is the number of events beyond a quantile below which its
// estimate rests on too few events to trust.
const MinTailEvents = 20

// maxTrialsToSettle caps the estimate of trials needed: past it, more
// trials are not a practical answer.
const maxTrialsToSettle = 1000

// Verdict is the comparison of one metric at one percentile.
type Verdict struct {
	Metric    string
	Quantile  string  // "p50", "p90", "p99", "p99.9", "max"
	Base      float64 // baseline quantile of the merged trials, ns
	Cand      float64 // candidate quantile, ns
	Ratio     float64 // Cand / Base
	Lo, Hi    float64 // 95% confidence interval of Ratio
	Threshold float64 // as a fraction; 0 when not gated
	Gated     bool
	Kind      Kind
	// Warnings say why the verdict may be less solid than it looks; they
	// never change it.
	Warnings []string
	// TrialsToSettle, for an inconclusive verdict, estimates the trials per
	// side that would likely make the interval exclude 1 (0 otherwise).
	TrialsToSettle int
	// BaseTrials and CandTrials are the trial counts behind the verdict.
	BaseTrials, CandTrials int
}

// ScenarioReport is the comparison of one scenario.
type ScenarioReport struct {
	Name     string
	Verdicts []Verdict // by metric name, then percentile order
	// Warnings apply to the scenario as a whole: a metric on one side only,
	// a gate block that could not be read, parameters forced past.
	Warnings []string
}

// Report is the comparison of two Results.
type Report struct {
	Base, Cand Side
	Scenarios  []ScenarioReport
	// Warnings apply to every verdict: the environments differ, timings are
	// emulated, a scenario is on one side only.
	Warnings []string
	// BaseResult and CandResult are the compared Results, for renderers
	// that draw the distributions (html); nil in a Report built by hand.
	BaseResult, CandResult *result.Result
}

// Side describes one of the compared Results.
type Side struct {
	Target        string
	KernelRelease string
	Accel         string
}

// Options controls Compare. The zero value compares with the defaults.
type Options struct {
	// Resamples per confidence interval; 0 means DefaultResamples.
	Resamples int
	// Thresholds are command-line overrides.
	Thresholds []Threshold
	// Force compares scenarios whose parameters differ (with a warning)
	// instead of refusing.
	Force bool
}

// ErrParamsDiffer reports scenarios run with different parameters: their
// numbers measure different things.
var ErrParamsDiffer = errors.New("scenario parameters differ")

// Compare compares every scenario present in both Results.
func Compare(base, cand *result.Result, opt Options) (*Report, error) {
	rep := &Report{Base: sideOf(base), Cand: sideOf(cand), BaseResult: base, CandResult: cand}
	rep.Warnings = append(rep.Warnings, environmentWarnings(base, cand)...)
	for _, cs := range cand.Scenarios {
		bs := base.Find(cs.Name)
		if bs == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("scenario %s is not in the baseline; not compared", cs.Name))
			continue
		}
		sr, err := CompareScenario(bs, &cs, opt)
		if err != nil {
			return nil, err
		}
		rep.Scenarios = append(rep.Scenarios, *sr)
	}
	for _, bs := range base.Scenarios {
		if cand.Find(bs.Name) == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("scenario %s is in the baseline only; not compared", bs.Name))
		}
	}
	if len(rep.Scenarios) == 0 {
		return nil, fmt.Errorf("no scenario in common: nothing to compare")
	}
	return rep, nil
}

func sideOf(r *result.Result) Side {
	return Side{Target: r.Target.Name, KernelRelease: r.Environment.KernelRelease, Accel: r.Target.Accel}
}

func environmentWarnings(base, cand *result.Result) []string {
	var w []string
	diff := func(field, b, c string) {
		if b != c {
			w = append(w, fmt.Sprintf("environments differ: %s is %q in the baseline, %q in the candidate", field, b, c))
		}
	}
	be, ce := base.Environment, cand.Environment
	diff("kernel release", be.KernelRelease, ce.KernelRelease)
	diff("kernel config hash", be.ConfigHash, ce.ConfigHash)
	diff("CPU model", be.CPUModel, ce.CPUModel)
	diff("CPU count", fmt.Sprint(be.CPUs), fmt.Sprint(ce.CPUs))
	bt, ct := base.Target, cand.Target
	diff("target accel", bt.Accel, ct.Accel)
	diff("target kind", bt.Kind, ct.Kind)
	diff("target vCPUs", fmt.Sprint(bt.VCPUs), fmt.Sprint(ct.VCPUs))
	diff("target memory (MiB)", fmt.Sprint(bt.MemMiB), fmt.Sprint(ct.MemMiB))
	diff("target kernel cmdline", bt.Cmdline, ct.Cmdline)
	for _, s := range []struct {
		name string
		r    *result.Result
	}{{"baseline", base}, {"candidate", cand}} {
		if s.r.Partial {
			w = append(w, fmt.Sprintf("the %s run is partial (%s): trials are missing", s.name, s.r.Error))
		}
		if s.r.Target.Accel == "tcg" {
			w = append(w, fmt.Sprintf("the %s ran under TCG: timings are emulated and say little about real hardware", s.name))
		}
	}
	return w
}

// CompareScenario compares the metrics present in both runs of a scenario.
// The candidate's gate block sets its thresholds.
func CompareScenario(base, cand *result.Scenario, opt Options) (*ScenarioReport, error) {
	sr := &ScenarioReport{Name: cand.Name}
	if base.Params != cand.Params {
		if !opt.Force {
			return nil, fmt.Errorf("%w in scenario %s (baseline %s, candidate %s): the runs measure different things; rerun the baseline, or pass --force", ErrParamsDiffer, cand.Name, short(base.Params), short(cand.Params))
		}
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("parameters differ (baseline %s, candidate %s); compared because forced", short(base.Params), short(cand.Params)))
	}
	var gate map[string]map[string]float64
	if len(cand.Definition) > 0 && string(cand.Definition) != "null" {
		// Only the gate block matters here; decoding just it keeps report
		// free of the scenarios package and its workloads. The field is
		// scenarios.Scenario.Gate's.
		var def struct {
			Gate map[string]map[string]float64 `json:"gate"`
		}
		if err := json.Unmarshal(cand.Definition, &def); err != nil {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("scenario definition unreadable (%v); default thresholds used", err))
		} else {
			gate = def.Gate
		}
	}
	var names []string
	for name := range cand.Metrics {
		if _, ok := base.Metrics[name]; ok {
			names = append(names, name)
		} else {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("metric %s is in the candidate only; not compared", name))
		}
	}
	for name := range base.Metrics {
		if _, ok := cand.Metrics[name]; !ok {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("metric %s is in the baseline only; not compared", name))
		}
	}
	slices.Sort(names)
	slices.Sort(sr.Warnings)
	for _, name := range names {
		if base.Metrics[name].Merged().Count() == 0 && cand.Metrics[name].Merged().Count() == 0 {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("metric %s has no events on either side; not compared", name))
			continue
		}
		th := func(p Percentile) (float64, bool) { return ResolveThreshold(name, p.Name, gate, opt.Thresholds) }
		sr.Verdicts = append(sr.Verdicts, CompareMetric(name, trialsOf(base.Metrics[name]), trialsOf(cand.Metrics[name]), th, opt.Resamples)...)
	}
	return sr, nil
}

func short(digest string) string {
	if digest == "" {
		return "(none)"
	}
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

func trialsOf(m *result.Metric) []*hist.Histogram {
	var hs []*hist.Histogram
	for _, t := range m.Trials {
		if t.Histogram != nil {
			hs = append(hs, t.Histogram)
		}
	}
	return hs
}

// CompareMetric returns a verdict per percentile for one metric's trials.
// threshold gives each percentile's threshold and whether it is gated;
// resamples ≤ 0 means DefaultResamples.
func CompareMetric(metric string, base, cand []*hist.Histogram, threshold func(Percentile) (float64, bool), resamples int) []Verdict {
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	bs, cs := newSide(base), newSide(cand)
	content := contentHash(base, cand)
	var out []Verdict
	for _, p := range Percentiles {
		t, gated := threshold(p)
		e := estimate(bs, cs, p.Q, resamples, seedFor(content, metric, p.Name))
		out = append(out, Judge(metric, p, e, t, gated, len(base), len(cand)))
	}
	return out
}

// Judge applies the verdict rules to an estimate.
func Judge(metric string, p Percentile, e Estimate, threshold float64, gated bool, baseTrials, candTrials int) Verdict {
	v := Verdict{
		Metric: metric, Quantile: p.Name,
		Base: e.Base, Cand: e.Cand, Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi,
		Threshold: threshold, Gated: gated,
		BaseTrials: baseTrials, CandTrials: candTrials,
	}
	if !gated {
		v.Threshold = 0
	}
	v.Warnings = warnings(p, e, gated, baseTrials, candTrials)
	switch {
	case !gated:
		v.Kind = NotGated
	case e.BaseEvents == 0 || e.CandEvents == 0 || math.IsNaN(e.Ratio) || math.IsInf(e.Ratio, 0):
		v.Kind = Inconclusive
	case e.Ratio > 1+threshold:
		if e.Lo > 1 && !tailShort(p, e) {
			v.Kind = Regression
		} else if e.Lo > 1 {
			// The interval cannot be trusted on a handful of events past
			// the quantile: a gate says "regression" only when it knows.
			v.Kind = Inconclusive
			v.TrialsToSettle = trialsForTail(p, e, baseTrials, candTrials)
		} else {
			v.Kind = Inconclusive
			v.TrialsToSettle = trialsToSettle(e.Ratio-1, e.Ratio-e.Lo, baseTrials, candTrials)
		}
	case e.Ratio < 1-threshold:
		if e.Hi < 1 && !tailShort(p, e) {
			v.Kind = Improvement
		} else if e.Hi < 1 {
			v.Kind = Inconclusive
			v.TrialsToSettle = trialsForTail(p, e, baseTrials, candTrials)
		} else {
			v.Kind = Inconclusive
			v.TrialsToSettle = trialsToSettle(1-e.Ratio, e.Hi-e.Ratio, baseTrials, candTrials)
		}
	default:
		v.Kind = NoChange
	}
	return v
}

// tailShort reports whether either side has fewer than MinTailEvents events
// beyond the quantile.
func tailShort(p Percentile, e Estimate) bool {
	return float64(e.BaseEvents)*(1-p.Q) < MinTailEvents || float64(e.CandEvents)*(1-p.Q) < MinTailEvents
}

// trialsForTail estimates the trials per side that would give both sides
// MinTailEvents events beyond the quantile, at the events per trial seen.
func trialsForTail(p Percentile, e Estimate, baseTrials, candTrials int) int {
	need := 0
	for _, side := range []struct {
		events uint64
		trials int
	}{{e.BaseEvents, baseTrials}, {e.CandEvents, candTrials}} {
		if side.trials == 0 || side.events == 0 {
			continue
		}
		perTrial := float64(side.events) / float64(side.trials) * (1 - p.Q)
		need = max(need, int(math.Ceil(MinTailEvents/perTrial)))
	}
	return min(max(need, 1), maxTrialsToSettle)
}

// trialsToSettle estimates the trials per side at which the interval's
// half-width, shrinking as 1/√n, falls below the distance from the ratio to
// 1. It assumes the ratio stays where it is, so it is a likely answer, not
// a promise.
func trialsToSettle(distance, halfWidth float64, baseTrials, candTrials int) int {
	n := float64(max(min(baseTrials, candTrials), 1))
	if math.IsNaN(halfWidth) || halfWidth <= 0 || distance <= 0 {
		return 0
	}
	need := n * (halfWidth / distance) * (halfWidth / distance)
	// A 10% margin: stopping exactly at the boundary settles half the time.
	k := int(math.Ceil(need * 1.1))
	if k <= int(n) {
		k = int(n) + 1
	}
	return min(k, maxTrialsToSettle)
}

func warnings(p Percentile, e Estimate, gated bool, baseTrials, candTrials int) []string {
	var w []string
	if e.BaseEvents == 0 {
		w = append(w, "baseline has no events")
	}
	if e.CandEvents == 0 {
		w = append(w, "candidate has no events")
	}
	if p.Q < 1 || gated {
		var few []string
		for _, s := range []struct {
			name string
			n    uint64
		}{{"baseline", e.BaseEvents}, {"candidate", e.CandEvents}} {
			if s.n == 0 {
				continue
			}
			if beyond := float64(s.n) * (1 - p.Q); beyond < MinTailEvents {
				few = append(few, fmt.Sprintf("%s %.0f", s.name, math.Floor(beyond)))
			}
		}
		if len(few) > 0 {
			w = append(w, fmt.Sprintf("few events beyond %s (%s; want ≥ %d): run longer or more trials", p.Name, strings.Join(few, ", "), MinTailEvents))
		}
	}
	switch {
	case baseTrials == 1 && candTrials == 1:
		w = append(w, "one trial per side: the interval ignores trial-to-trial variation")
	case baseTrials == 1:
		w = append(w, "one baseline trial: the interval ignores trial-to-trial variation")
	case candTrials == 1:
		w = append(w, "one candidate trial: the interval ignores trial-to-trial variation")
	}
	return w
}

// Counts tallies a report's verdicts.
type Counts struct {
	Gated, Regressions, Improvements, Inconclusive int
}

// Tally counts the gated verdicts of r by kind.
func (r *Report) Tally() Counts {
	var c Counts
	for _, s := range r.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated {
				continue
			}
			c.Gated++
			switch v.Kind {
			case Regression:
				c.Regressions++
			case Improvement:
				c.Improvements++
			case Inconclusive:
				c.Inconclusive++
			}
		}
	}
	return c
}

// Failed reports whether the gate fails: any regression, or with strict
// any inconclusive verdict too.
func (r *Report) Failed(strict bool) bool {
	c := r.Tally()
	return c.Regressions > 0 || (strict && c.Inconclusive > 0)
}
