package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
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
	// NotGated is reported for what the gate policy does not name: the
	// numbers are shown, nothing is judged.
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
	Metric   string
	Quantile string  // "p50", "p90", "p99", "p99.9", "max"
	Base     float64 // baseline quantile of the merged trials, ns
	Cand     float64 // candidate quantile, ns
	Ratio    float64 // Cand / Base
	Lo, Hi   float64 // 95% confidence interval of Ratio
	// SE is the standard error of log Ratio and DF its degrees of freedom
	// (see Estimate). ExcessSD is the between-run spread, per side, that
	// a calibration added to SE (0 when none was).
	SE, DF, ExcessSD float64
	// P is the one-sided p-value in the direction of the estimate (of
	// "ratio ≤ 1" when Ratio > 1, of "ratio ≥ 1" when below). Level is the
	// level it was judged at: its Holm level in the invocation's family at
	// this look's alpha, so that the test rejects exactly when P ≤ Level.
	// Level is 0 for a verdict that is not gated.
	P, Level  float64
	Threshold float64 // as a fraction; 0 when not gated
	Gated     bool
	Kind      Kind
	// Warnings say why the verdict may be less solid than it looks; they
	// never change it.
	Warnings []Warning
	// TrialsToSettle, for an inconclusive verdict, estimates the trials per
	// side that would likely decide it at this look's levels (0 when no
	// count would, or when it is decided).
	TrialsToSettle int
	// BaseTrials and CandTrials are the trial counts behind the verdict,
	// BaseEvents and CandEvents the events.
	BaseTrials, CandTrials int
	BaseEvents, CandEvents uint64
	// Rounds is the number of paired rounds behind a verdict of a same-job
	// gate (see paired.go); 0 for trials compared as two samples.
	Rounds int
	// Detectable is the smallest shift, as a fraction, that this
	// comparison could have called at the level it was judged at: the
	// distance from its estimate to its lower bound there, and never below
	// the threshold (a regression must pass it too). NaN when unknown.
	Detectable float64

	// ranks holds a rank-based verdict's order statistics (paired rounds'
	// Walsh averages); pUp and pDown its
	// exact one-sided p-values.
	ranks      *rankData
	pUp, pDown float64
}

// ScenarioReport is the comparison of one scenario.
type ScenarioReport struct {
	Name     string
	Verdicts []Verdict // by metric name, then percentile order
	// Warnings apply to the scenario as a whole: a metric on one side only,
	// a gate block that could not be read, parameters forced past.
	Warnings []Warning
}

// Report is the comparison of two Results.
type Report struct {
	Base, Cand Side
	Scenarios  []ScenarioReport
	// Warnings apply to every verdict: the environments differ, timings are
	// emulated, a scenario is on one side only.
	Warnings []Warning
	// BaseResult and CandResult are the compared Results, for renderers
	// that draw the distributions (html); nil in a Report built by hand.
	BaseResult, CandResult *result.Result
	// Look is the look of a sequential gate run this report judged (0: a
	// single look). Alpha is the family-wise level spent at this look and
	// Beta the equivalence level ("no change"); Tests the gated tests of
	// the family they were spent over (for a matrix, all of its pairs').
	Look        int
	Alpha, Beta float64
	Tests       int
	// Stored says the baseline is a stored run; Calibration is the
	// between-run spread its intervals were widened by (nil for none).
	Stored      bool
	Calibration *Calibration
	// Run is how a sequential gate run went; nil for a single comparison.
	Run *RunInfo
}

// Side describes one of the compared Results.
type Side struct {
	Target        string
	KernelRelease string
	Accel         string
	// Clock is a VM's clock (result.Target.Clock), "" for the host.
	Clock string
}

// Options controls Compare. The zero value compares with the defaults: a
// single look at DefaultAlpha, the baseline measured in the same job.
type Options struct {
	// Resamples per bootstrap; 0 means DefaultResamples.
	Resamples int
	// Thresholds are command-line overrides.
	Thresholds []Threshold
	// Force compares scenarios whose parameters differ (with a warning)
	// instead of refusing.
	Force bool
	// Alpha is the family-wise false-alarm rate of the invocation, over
	// all looks of a sequential run; 0 means DefaultAlpha. Beta bounds the
	// chance that a regression of at least its threshold is called "no
	// change", over all looks; 0 means DefaultBeta.
	Alpha, Beta float64
	// Look is the look this comparison is of a sequential gate run
	// (1-based; see Sequential), or 0 for a single, final look at the full
	// Alpha and Beta. Looks is Sequential.Looks: the most looks planned,
	// 0 for open-ended.
	Look, Looks int
	// EvenSpending spends the rates evenly over the Looks planned (see
	// Sequential.Even).
	EvenSpending bool
	// Stored says the baseline is a stored run from another job, not
	// measured beside the candidate: between-run spread is not in its
	// trials. Calibration, when set, is that spread, and widens every
	// interval; without it the report warns that its intervals cover
	// within-run noise only.
	Stored      bool
	Calibration *Calibration

	// gatedOnly skips the bootstrap of what is not gated (simulations:
	// it changes no verdict, only what is reported beside them).
	gatedOnly bool
}

func (o Options) sequential() Sequential {
	return Sequential{Alpha: o.Alpha, Beta: o.Beta, Looks: o.Looks, Even: o.EvenSpending}
}

// ErrCandidateIncomplete reports a candidate that lacks what the gate
// policy gates: a metric, its events, its trials. A broken run, not a
// pass: the caller exits as for an infrastructure failure.
var ErrCandidateIncomplete = errors.New("candidate incomplete")

// ErrBaselineIncomplete reports a baseline that lacks what its own gate
// policy gates, or whose policy gates nothing: every comparison with it
// would pass "0 gated percentiles". Broken input, not a pass.
var ErrBaselineIncomplete = errors.New("baseline incomplete")

// CheckBaseline returns an error wrapping ErrBaselineIncomplete for the
// first scenario of r whose gate policy (GatePolicy) gates nothing it
// measured: an empty gate block, a metric with no percentile, a
// percentile that is none, a metric the scenario has not measured.
func CheckBaseline(r *result.Result) error {
	for i := range r.Scenarios {
		if err := checkBaselineGated(&r.Scenarios[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkBaselineGated(s *result.Scenario) error {
	broken := func(format string, a ...any) error {
		return fmt.Errorf("%w: scenario %s %s: it would pass every gate", ErrBaselineIncomplete, s.Name, fmt.Sprintf(format, a...))
	}
	if s.Gate != nil && len(s.Gate) == 0 {
		return broken("has an empty gate block")
	}
	gate, _ := GatePolicy(s)
	metrics := slices.Sorted(maps.Keys(gate))
	for _, m := range metrics {
		ps := gate[m]
		if len(ps) == 0 {
			return broken("gates %s at no percentile", m)
		}
		for _, p := range slices.Sorted(maps.Keys(ps)) {
			if _, ok := LookupPercentile(p); !ok {
				return broken("gates %s at %q, which is not a percentile", m, p)
			}
		}
		if m == "*" {
			if len(s.Metrics) == 0 {
				return broken("gates every metric and has none")
			}
			continue
		}
		if s.Metrics[m] == nil {
			return broken("gates %s, which it has not measured", m)
		}
	}
	return nil
}

// ErrParamsDiffer reports scenarios run with different parameters: their
// numbers measure different things.
var ErrParamsDiffer = errors.New("scenario parameters differ")

// ErrClocksDiffer reports Results measured on different clocks (virtual
// and real time, or virtual time of two shifts): a ratio of their times
// measures nothing.
var ErrClocksDiffer = errors.New("clocks differ")

// checkClocks refuses base and cand of different clocks.
func checkClocks(base, cand *result.Result) error {
	b, c := clockName(base.Target), clockName(cand.Target)
	if b == c {
		return nil
	}
	return fmt.Errorf("%w: the baseline ran in %s, the candidate in %s; compare runs of one clock (tailgate run --clock)", ErrClocksDiffer, b, c)
}

// clockName names t's clock for messages: "real time", "virtual time
// (shift 0)".
func clockName(t result.Target) string {
	if t.ClockOf() == result.ClockVirtual {
		return fmt.Sprintf("virtual time (shift %d)", t.Shift())
	}
	return t.ClockOf() + " time"
}

// Compare compares every scenario present in both Results. The gated tests
// of all scenarios form one family (see Sequential for the rule).
func Compare(base, cand *result.Result, opt Options) (*Report, error) {
	rep, err := compare(base, cand, opt)
	if err != nil {
		return nil, err
	}
	judgeReports([]*Report{rep}, opt)
	return rep, nil
}

// compare builds the report with every estimate and p-value, its verdicts
// not yet judged: the family may span other reports.
func compare(base, cand *result.Result, opt Options) (*Report, error) {
	if err := checkClocks(base, cand); err != nil {
		return nil, err
	}
	rep := &Report{Base: sideOf(base), Cand: sideOf(cand), BaseResult: base, CandResult: cand, Stored: opt.Stored}
	rep.Warnings = append(rep.Warnings, environmentWarnings(base, cand)...)
	if opt.Stored {
		if c := opt.Calibration; c == nil {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnWithinRunOnly, Side: Baseline, Target: base.Target.Name, Detail: base.Environment.KernelRelease})
		} else {
			rep.Calibration = c
			if c.Target != base.Target.Name {
				rep.Warnings = append(rep.Warnings, Warning{Kind: WarnCalibrationMismatch, Field: FieldTarget, Base: base.Target.Name, Cand: c.Target})
			}
			if c.KernelRelease != base.Environment.KernelRelease {
				rep.Warnings = append(rep.Warnings, Warning{Kind: WarnCalibrationMismatch, Field: FieldKernelRelease, Base: base.Environment.KernelRelease, Cand: c.KernelRelease})
			}
		}
	}
	for _, cs := range cand.Scenarios {
		bs := base.Find(cs.Name)
		if bs == nil {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnScenarioOneSide, Side: Candidate, Scenario: cs.Name})
			continue
		}
		sr, err := compareScenario(bs, &cs, opt)
		if err != nil {
			return nil, err
		}
		rep.Scenarios = append(rep.Scenarios, *sr)
	}
	for _, bs := range base.Scenarios {
		if cand.Find(bs.Name) == nil {
			rep.Warnings = append(rep.Warnings, Warning{Kind: WarnScenarioOneSide, Side: Baseline, Scenario: bs.Name})
		}
	}
	if len(cand.Scenarios) == 0 && len(base.Scenarios) > 0 {
		return nil, fmt.Errorf("%w: it has no scenarios, the baseline has %d: the candidate's run is broken", ErrCandidateIncomplete, len(base.Scenarios))
	}
	if len(rep.Scenarios) == 0 {
		return nil, fmt.Errorf("no scenario in common: nothing to compare")
	}
	return rep, nil
}

func sideOf(r *result.Result) Side {
	return Side{Target: r.Target.Name, KernelRelease: r.Environment.KernelRelease, Accel: r.Target.Accel, Clock: r.Target.Clock}
}

func environmentWarnings(base, cand *result.Result) []Warning {
	var w []Warning
	diff := func(field, b, c string) {
		if b != c {
			w = append(w, Warning{Kind: WarnEnvironment, Field: field, Base: b, Cand: c})
		}
	}
	be, ce := base.Environment, cand.Environment
	diff(FieldKernelRelease, be.KernelRelease, ce.KernelRelease)
	diff(FieldConfigHash, be.ConfigHash, ce.ConfigHash)
	diff(FieldCPUModel, be.CPUModel, ce.CPUModel)
	diff(FieldCPUs, fmt.Sprint(be.CPUs), fmt.Sprint(ce.CPUs))
	bt, ct := base.Target, cand.Target
	diff(FieldAccel, bt.Accel, ct.Accel)
	diff(FieldKind, bt.Kind, ct.Kind)
	diff(FieldVCPUs, fmt.Sprint(bt.VCPUs), fmt.Sprint(ct.VCPUs))
	diff(FieldMemMiB, fmt.Sprint(bt.MemMiB), fmt.Sprint(ct.MemMiB))
	diff(FieldCmdline, bt.Cmdline, ct.Cmdline)
	for _, s := range []struct {
		side Role
		r    *result.Result
	}{{Baseline, base}, {Candidate, cand}} {
		if s.r.Partial {
			w = append(w, Warning{Kind: WarnPartial, Side: s.side, Detail: s.r.Error})
		}
		if s.r.Target.Accel == "tcg" && s.r.Target.ClockOf() != result.ClockVirtual {
			w = append(w, Warning{Kind: WarnEmulated, Side: s.side})
		}
	}
	// Both or neither: checkClocks refuses one of each.
	if bt.ClockOf() == result.ClockVirtual {
		w = append(w, Warning{Kind: WarnVirtualTime, Side: Both, Detail: fmt.Sprint(bt.Shift())})
	}
	return w
}

// CompareScenario compares the metrics present in both runs of a scenario,
// its gated tests judged as a family of their own. The baseline's gate
// policy (see GatePolicy) says what is gated, never the candidate's.
func CompareScenario(base, cand *result.Scenario, opt Options) (*ScenarioReport, error) {
	sr, err := compareScenario(base, cand, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Scenarios: []ScenarioReport{*sr}}
	judgeReports([]*Report{rep}, opt)
	return &rep.Scenarios[0], nil
}

// variantWarnings warns of each tracer both sides attached, but as
// different variants.
func variantWarnings(base, cand *result.Scenario) []Warning {
	var ws []Warning
	for _, c := range cand.Tracers {
		for _, b := range base.Tracers {
			if b.Name == c.Name && b.Variant != c.Variant && b.Variant != "" && c.Variant != "" {
				ws = append(ws, Warning{Kind: WarnTracerVariant, Scenario: cand.Name, Detail: c.Name, Base: b.Variant, Cand: c.Variant})
			}
		}
	}
	return ws
}

// steppedWarnings warns of each function whose entry probe was
// single-stepped on either side (see result.Probe), the candidate's
// first.
func steppedWarnings(base, cand *result.Scenario) []Warning {
	type key struct{ tracer, symbol string }
	at := map[key]int{}
	var ws []Warning
	for _, side := range []struct {
		s *result.Scenario
		r Role
	}{{cand, Candidate}, {base, Baseline}} {
		for _, t := range side.s.Tracers {
			for _, p := range t.Probes {
				if !p.SingleStepped {
					continue
				}
				k := key{t.Name, p.Symbol}
				if i, seen := at[k]; !seen {
					at[k] = len(ws)
					ws = append(ws, Warning{Kind: WarnSingleStepped, Scenario: cand.Name, Side: side.r, Detail: p.Symbol, Base: p.Mnemonic, Cand: p.Insn})
				} else if ws[i].Side != side.r {
					ws[i].Side = Both
				}
			}
		}
	}
	return ws
}

func compareScenario(base, cand *result.Scenario, opt Options) (*ScenarioReport, error) {
	sr := &ScenarioReport{Name: cand.Name}
	if base.Params != cand.Params {
		if !opt.Force {
			return nil, fmt.Errorf("%w in scenario %s (baseline %s, candidate %s): the runs measure different things; rerun the baseline, or pass --force", ErrParamsDiffer, cand.Name, short(base.Params), short(cand.Params))
		}
		sr.Warnings = append(sr.Warnings, Warning{Kind: WarnParamsDiffer, Scenario: cand.Name, Base: short(base.Params), Cand: short(cand.Params)})
	}
	sr.Warnings = append(sr.Warnings, variantWarnings(base, cand)...)
	sr.Warnings = append(sr.Warnings, steppedWarnings(base, cand)...)
	if w := interferenceWarning(base, cand); w != nil {
		sr.Warnings = append(sr.Warnings, *w)
	}
	// The judge comes from the base: a candidate (a pull request) must
	// not loosen its own thresholds. Command-line thresholds still apply.
	if err := checkBaselineGated(base); err != nil {
		return nil, err
	}
	gate, warn := GatePolicy(base)
	if warn != nil {
		sr.Warnings = append(sr.Warnings, *warn)
	}
	candGate, _ := GatePolicy(cand)
	sr.Warnings = append(sr.Warnings, gateDiffers(cand.Name, gate, candGate)...)
	if err := checkCandidateGated(base, cand, gate, opt.Thresholds); err != nil {
		return nil, err
	}
	pcts := percentilesFor(gate, opt.Thresholds)
	var names []string
	var oneSide []Warning
	for name := range cand.Metrics {
		if _, ok := base.Metrics[name]; ok {
			names = append(names, name)
		} else {
			oneSide = append(oneSide, Warning{Kind: WarnMetricOneSide, Side: Candidate, Scenario: cand.Name, Metric: name})
		}
	}
	for name := range base.Metrics {
		if _, ok := cand.Metrics[name]; !ok {
			oneSide = append(oneSide, Warning{Kind: WarnMetricOneSide, Side: Baseline, Scenario: cand.Name, Metric: name})
		}
	}
	slices.SortFunc(oneSide, func(a, b Warning) int {
		if a.Metric != b.Metric {
			return compareStrings(a.Metric, b.Metric)
		}
		return compareStrings(string(a.Side), string(b.Side))
	})
	sr.Warnings = append(sr.Warnings, oneSide...)
	slices.Sort(names)
	for _, name := range names {
		if base.Metrics[name].Merged().Count() == 0 && cand.Metrics[name].Merged().Count() == 0 {
			sr.Warnings = append(sr.Warnings, Warning{Kind: WarnMetricNoEvents, Scenario: cand.Name, Metric: name})
			continue
		}
		th := func(p Percentile) (float64, bool) { return ResolveThreshold(name, p.Name, gate, opt.Thresholds) }
		excess := func(Percentile) float64 { return 0 }
		if opt.Stored && opt.Calibration != nil {
			excess = func(p Percentile) float64 {
				sd, ok := opt.Calibration.Excess(cand.Name, name, p.Name)
				if !ok {
					if _, gated := th(p); gated {
						sr.Warnings = append(sr.Warnings, Warning{Kind: WarnNotCalibrated, Scenario: cand.Name, Metric: name, Percentile: p.Name})
					}
					return 0
				}
				return sd
			}
		}
		bm, cm := base.Metrics[name], cand.Metrics[name]
		if pairs, ok := pairRounds(bm, cm); ok && !opt.Stored {
			sr.Verdicts = append(sr.Verdicts, comparePairedMetric(name, bm, cm, pairs, pcts, th)...)
			continue
		}
		sr.Verdicts = append(sr.Verdicts, compareMetric(name, trialsOf(bm), trialsOf(cm), pcts, th, excess, opt)...)
	}
	return sr, nil
}

// gateDiffers warns of every metric and percentile the two policies
// threshold differently.
func gateDiffers(scenario string, base, cand result.GatePolicy) []Warning {
	var ws []Warning
	keys := map[[2]string]bool{}
	for _, g := range []result.GatePolicy{base, cand} {
		for m, ps := range g {
			for p := range ps {
				keys[[2]string{m, p}] = true
			}
		}
	}
	fmtT := func(g result.GatePolicy, k [2]string) string {
		v, ok := g[k[0]][k[1]]
		if !ok {
			return ""
		}
		return strconv.FormatFloat(math.Round(v*1e5)/1e3, 'f', -1, 64) + "%"
	}
	for k := range keys {
		b, c := fmtT(base, k), fmtT(cand, k)
		if b != c {
			ws = append(ws, Warning{Kind: WarnGateDiffers, Scenario: scenario, Metric: k[0], Percentile: k[1], Base: b, Cand: c})
		}
	}
	slices.SortFunc(ws, func(a, b Warning) int {
		if a.Metric != b.Metric {
			return compareStrings(a.Metric, b.Metric)
		}
		return compareStrings(a.Percentile, b.Percentile)
	})
	return ws
}

// checkCandidateGated returns ErrCandidateIncomplete, naming what is
// missing, when the candidate lacks trials or events of a metric the
// policy gates and the baseline has.
func checkCandidateGated(base, cand *result.Scenario, gate result.GatePolicy, cli []Threshold) error {
	var missing []string
	if cand.Trials == 0 && base.Trials > 0 {
		missing = append(missing, "every trial")
	}
	var names []string
	for name := range base.Metrics {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		bm := base.Metrics[name]
		if bm == nil || bm.Merged().Count() == 0 {
			continue
		}
		gated := false
		for _, p := range percentilesFor(gate, cli) {
			if _, ok := ResolveThreshold(name, p.Name, gate, cli); ok {
				gated = true
			}
		}
		if !gated {
			continue
		}
		cm := cand.Metrics[name]
		switch {
		case cm == nil:
			missing = append(missing, "metric "+name)
		case len(cm.Trials) == 0:
			missing = append(missing, "trials of "+name)
		case cm.Merged().Count() == 0:
			missing = append(missing, "events of "+name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: scenario %s: the candidate has no %s, which the baseline gates: the candidate's run is broken", ErrCandidateIncomplete, cand.Name, strings.Join(missing, ", no "))
	}
	return nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// CompareMetric returns a verdict per percentile for one metric's trials,
// its gated percentiles judged as a family of their own at a single look
// at DefaultAlpha. threshold gives each percentile's threshold and whether
// it is gated; resamples ≤ 0 means DefaultResamples.
func CompareMetric(metric string, base, cand []*hist.Histogram, threshold func(Percentile) (float64, bool), resamples int) []Verdict {
	vs := compareMetric(metric, base, cand, Percentiles, threshold, func(Percentile) float64 { return 0 }, Options{Resamples: resamples})
	judgeFamily(gatedOf(vs), DefaultAlpha, DefaultBeta)
	return vs
}

// compareMetric estimates every percentile; the verdicts are judged later,
// with their family. excess gives the between-run sd per side to add.
func compareMetric(metric string, base, cand []*hist.Histogram, pcts []Percentile, threshold func(Percentile) (float64, bool), excess func(Percentile) float64, opt Options) []Verdict {
	resamples := opt.Resamples
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	bs, cs := newSide(base), newSide(cand)
	content := contentHash(base, cand)
	var out []Verdict
	for _, p := range pcts {
		t, gated := threshold(p)
		n := resamples
		if opt.gatedOnly && !gated {
			n = 0
		}
		var e Estimate
		if opt.Stored && opt.Calibration != nil && opt.Calibration.Statistic == StatisticTrialCentre {
			e = centreEstimate(base, cand, p.Q, n, seedFor(content, metric, p.Name))
		} else {
			e = estimate(bs, cs, p.Q, n, seedFor(content, metric, p.Name))
		}
		sd := excess(p)
		if sd > 0 {
			e = e.finish(2 * sd * sd)
		}
		v := newVerdict(metric, p, e, t, gated, len(base), len(cand))
		v.ExcessSD = sd
		out = append(out, v)
	}
	return out
}

// comparePairedMetric estimates every percentile of a metric whose trials
// pair by round (a same-job gate's).
func comparePairedMetric(metric string, base, cand *result.Metric, pairs []roundPair, pcts []Percentile, threshold func(Percentile) (float64, bool)) []Verdict {
	var out []Verdict
	for _, p := range pcts {
		t, gated := threshold(p)
		e, pd := pairedEstimate(base, cand, logRatios(pairs, p.Q), p.Q)
		v := newVerdict(metric, p, e, t, gated, len(base.Trials), len(cand.Trials))
		v.Rounds, v.ranks, v.pUp, v.pDown = e.Rounds, pd, e.PUp, e.PDown
		out = append(out, v)
	}
	return out
}

// newVerdict is a verdict's numbers before its family judges it.
func newVerdict(metric string, p Percentile, e Estimate, threshold float64, gated bool, baseTrials, candTrials int) Verdict {
	v := Verdict{
		Metric: metric, Quantile: p.Name,
		Base: e.Base, Cand: e.Cand, Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi,
		SE: e.SE, DF: e.DF, P: e.P(),
		Threshold: threshold, Gated: gated, Kind: NotGated,
		BaseTrials: baseTrials, CandTrials: candTrials,
		BaseEvents: e.BaseEvents, CandEvents: e.CandEvents,
		Detectable: math.NaN(),
	}
	if !gated {
		v.Threshold = 0
	}
	v.Warnings = warnings(p, e, gated, baseTrials, candTrials)
	return v
}

// Judge judges one estimate alone: a family of one test at a single look
// at DefaultAlpha.
func Judge(metric string, p Percentile, e Estimate, threshold float64, gated bool, baseTrials, candTrials int) Verdict {
	v := newVerdict(metric, p, e, threshold, gated, baseTrials, candTrials)
	if gated {
		judgeFamily([]*Verdict{&v}, DefaultAlpha, DefaultBeta)
	}
	return v
}

// tailShort reports whether either side has fewer than MinTailEvents events
// beyond the quantile.
func tailShort(q float64, baseEvents, candEvents uint64) bool {
	return float64(baseEvents)*(1-q) < MinTailEvents || float64(candEvents)*(1-q) < MinTailEvents
}

// trialsForTail estimates the trials per side that would give both sides
// MinTailEvents events beyond the quantile, at the events per trial seen.
func trialsForTail(q float64, v *Verdict) int {
	need := 0
	for _, side := range []struct {
		events uint64
		trials int
	}{{v.BaseEvents, v.BaseTrials}, {v.CandEvents, v.CandTrials}} {
		if side.trials == 0 || side.events == 0 {
			continue
		}
		perTrial := float64(side.events) / float64(side.trials) * (1 - q)
		if perTrial <= 0 {
			return maxTrialsToSettle
		}
		need = max(need, int(math.Ceil(MinTailEvents/perTrial)))
	}
	return min(max(need, 1), maxTrialsToSettle)
}

// trialsToSettle estimates the trials per side at which crit standard
// errors fit in distance (on the log scale): the within-run variance
// shrinks as 1/n, the between-run excess does not. It assumes the ratio
// stays where it is, so it is a likely answer, not a promise; 0 when no
// trial count would do.
func trialsToSettle(distance, within, excess, crit float64, baseTrials, candTrials int) int {
	n := float64(max(min(baseTrials, candTrials), 1))
	if math.IsNaN(within) || math.IsNaN(crit) || within <= 0 || distance <= 0 {
		return 0
	}
	room := (distance/crit)*(distance/crit) - excess
	if room <= 0 {
		return maxTrialsToSettle
	}
	// A 10% margin: stopping exactly at the boundary settles half the time.
	need := n * within / room * 1.1
	if need >= maxTrialsToSettle {
		return maxTrialsToSettle
	}
	k := int(math.Ceil(need))
	if k <= int(n) {
		k = int(n) + 1
	}
	return min(k, maxTrialsToSettle)
}

func warnings(p Percentile, e Estimate, gated bool, baseTrials, candTrials int) []Warning {
	var w []Warning
	if e.BaseEvents == 0 {
		w = append(w, Warning{Kind: WarnNoEvents, Side: Baseline, Percentile: p.Name})
	}
	if e.CandEvents == 0 {
		w = append(w, Warning{Kind: WarnNoEvents, Side: Candidate, Percentile: p.Name})
	}
	if p.Q < 1 || gated {
		beyond := func(n uint64) (int, bool) {
			b := float64(n) * (1 - p.Q)
			return int(math.Floor(b)), n > 0 && b < MinTailEvents
		}
		bc, bShort := beyond(e.BaseEvents)
		cc, cShort := beyond(e.CandEvents)
		if bShort || cShort {
			side := Both
			if !cShort {
				side = Baseline
			} else if !bShort {
				side = Candidate
			}
			w = append(w, Warning{Kind: WarnFewTailEvents, Side: side, Percentile: p.Name, BaseCount: bc, CandCount: cc})
		}
	}
	switch {
	case baseTrials == 1 && candTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Both, Percentile: p.Name})
	case baseTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Baseline, Percentile: p.Name})
	case candTrials == 1:
		w = append(w, Warning{Kind: WarnOneTrial, Side: Candidate, Percentile: p.Name})
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
