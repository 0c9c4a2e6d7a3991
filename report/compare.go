package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// CheckBaseline returns an error wrapping ErrBaselineIncomplete for the
// first scenario of r whose gate policy (stats.GatePolicy) gates nothing it
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
			if _, ok := stats.LookupPercentile(p); !ok {
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

// Compare compares every scenario present in both Results. The gated tests
// of all scenarios form one family (see stats.Sequential for the rule).
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
	opt.boots = base.Target.Virtual()
	opt.commonDraws = opt.boots && CommonDraws(base, cand)
	rep := &Report{Base: sideOf(base), Cand: sideOf(cand), BaseResult: base, CandResult: cand, Stored: opt.Stored}
	rep.Warnings = append(rep.Warnings, environmentWarnings(base, cand)...)
	// Boots in virtual time carry no between-run spread to calibrate.
	if opt.Stored && !opt.boots {
		if c := opt.Calibration; c == nil {
			rep.Warnings = append(rep.Warnings, stats.Warning{Kind: stats.WarnWithinRunOnly, Side: stats.Baseline, Target: base.Target.Name, Detail: base.Environment.KernelRelease})
		} else {
			rep.Calibration = c
			if c.Target != base.Target.Name {
				rep.Warnings = append(rep.Warnings, stats.Warning{Kind: WarnCalibrationMismatch, Field: stats.FieldTarget, Base: base.Target.Name, Cand: c.Target})
			}
			if c.KernelRelease != base.Environment.KernelRelease {
				rep.Warnings = append(rep.Warnings, stats.Warning{Kind: WarnCalibrationMismatch, Field: stats.FieldKernelRelease, Base: base.Environment.KernelRelease, Cand: c.KernelRelease})
			}
		}
	}
	for _, cs := range cand.Scenarios {
		bs := base.Find(cs.Name)
		if bs == nil {
			rep.Warnings = append(rep.Warnings, stats.Warning{Kind: WarnScenarioOneSide, Side: stats.Candidate, Scenario: cs.Name})
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
			rep.Warnings = append(rep.Warnings, stats.Warning{Kind: WarnScenarioOneSide, Side: stats.Baseline, Scenario: bs.Name})
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
	return Side{Target: r.Target.Name, KernelRelease: r.Environment.KernelRelease, Accel: r.Target.Accel, Clock: r.Target.Clock, Virtual: r.Target.Virtual()}
}

// CompareScenario compares the metrics present in both runs of a scenario,
// its gated tests judged as a family of their own. The baseline's gate
// policy (see stats.GatePolicy) says what is gated, never the candidate's.
func CompareScenario(base, cand *result.Scenario, opt Options) (*ScenarioReport, error) {
	sr, err := compareScenario(base, cand, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Scenarios: []ScenarioReport{*sr}}
	judgeReports([]*Report{rep}, opt)
	return &rep.Scenarios[0], nil
}

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
	if t.Virtual() {
		return fmt.Sprintf("virtual time (shift %d)", t.Shift())
	}
	return t.ClockOf() + " time"
}

// attachedAs says how t attached: "tp_btf", or "tp_btf on
// sock_recv_length and sock_send_length" where it records its hooks.
func attachedAs(t result.TracerInfo) string {
	if len(t.Hooks) == 0 {
		return t.Variant
	}
	return t.Variant + " on " + english.And(t.Hooks)
}

func variantWarnings(base, cand *result.Scenario) []stats.Warning {
	var ws []stats.Warning
	for _, c := range cand.Tracers {
		for _, b := range base.Tracers {
			if b.Name != c.Name || b.Variant == "" || c.Variant == "" {
				continue
			}
			// Hooks recorded on one side only are a Result of before
			// they were: nothing to compare them with.
			hooksDiffer := len(b.Hooks) > 0 && len(c.Hooks) > 0 && !slices.Equal(b.Hooks, c.Hooks)
			if b.Variant != c.Variant || hooksDiffer {
				ws = append(ws, stats.Warning{Kind: WarnTracerVariant, Scenario: cand.Name, Detail: c.Name, Base: attachedAs(b), Cand: attachedAs(c)})
			}
		}
	}
	return ws
}

// SteppedWarnings warns of each function whose entry probe was
// single-stepped on either side (see result.Probe), the candidate's
// first.
func SteppedWarnings(base, cand *result.Scenario) []stats.Warning {
	type key struct{ tracer, symbol string }
	at := map[key]int{}
	var ws []stats.Warning
	for _, side := range []struct {
		s *result.Scenario
		r stats.Role
	}{{cand, stats.Candidate}, {base, stats.Baseline}} {
		for _, t := range side.s.Tracers {
			for _, p := range t.Probes {
				if !p.SingleStepped {
					continue
				}
				k := key{t.Name, p.Symbol}
				if i, seen := at[k]; !seen {
					at[k] = len(ws)
					ws = append(ws, stats.Warning{Kind: WarnSingleStepped, Scenario: cand.Name, Side: side.r, Detail: p.Symbol, Base: p.Mnemonic, Cand: p.Insn})
				} else if ws[i].Side != side.r {
					ws[i].Side = stats.Both
				}
			}
		}
	}
	return ws
}

// compareScenario estimates every metric and percentile of a scenario
// both sides ran; its verdicts are judged later, with their family.
func compareScenario(base, cand *result.Scenario, opt Options) (*ScenarioReport, error) {
	sr := &ScenarioReport{Name: cand.Name}
	if err := sr.checkRuns(base, cand, opt.Force); err != nil {
		return nil, err
	}
	gate, err := sr.gatePolicy(base, cand, opt.Thresholds)
	if err != nil {
		return nil, err
	}
	names, oneSide := sharedMetrics(base, cand)
	sr.Warnings = append(sr.Warnings, oneSide...)
	sc := scenarioComparison{base: base, cand: cand, opt: opt, gate: gate,
		pcts: stats.PercentilesFor(gate, opt.Thresholds), sr: sr}
	for _, name := range names {
		sc.compareMetric(name)
	}
	sr.Warnings = append(sr.Warnings, bandWarnings(cand.Name, sr.Verdicts)...)
	return sr, nil
}

// checkRuns refuses runs of different parameters (unless force) and warns
// of what else differs between the two runs of the scenario.
func (sr *ScenarioReport) checkRuns(base, cand *result.Scenario, force bool) error {
	if base.Params != cand.Params {
		if !force {
			return fmt.Errorf("%w in scenario %s: %s; the runs measure different things: rerun the baseline, or pass --force", ErrParamsDiffer, cand.Name, paramsDiffText(base, cand))
		}
		sr.Warnings = append(sr.Warnings, stats.Warning{Kind: WarnParamsDiffer, Scenario: cand.Name, Base: short(base.Params), Cand: short(cand.Params), Detail: paramsDiffText(base, cand)})
	}
	sr.Warnings = append(sr.Warnings, variantWarnings(base, cand)...)
	sr.Warnings = append(sr.Warnings, SteppedWarnings(base, cand)...)
	if w := interferenceWarning(base, cand); w != nil {
		sr.Warnings = append(sr.Warnings, *w)
	}
	return nil
}

// gatePolicy is the gate the scenario is judged by, the base's, with the
// warnings of its resolution and of a candidate's gate that differs. The
// judge comes from the base: a candidate (a pull request) must not loosen
// its own thresholds. Command-line thresholds still apply.
func (sr *ScenarioReport) gatePolicy(base, cand *result.Scenario, cli []stats.Threshold) (result.GatePolicy, error) {
	if err := checkBaselineGated(base); err != nil {
		return nil, err
	}
	gate, warn := GatePolicy(base)
	if warn != nil {
		sr.Warnings = append(sr.Warnings, *warn)
	}
	candGate, _ := GatePolicy(cand)
	sr.Warnings = append(sr.Warnings, gateDiffers(cand.Name, gate, candGate)...)
	if err := checkCandidateGated(base, cand, gate, cli); err != nil {
		return nil, err
	}
	return gate, nil
}

// sharedMetrics are the metrics both sides measured, sorted, and a
// warning for each that only one side has, by metric and side.
func sharedMetrics(base, cand *result.Scenario) ([]string, []stats.Warning) {
	var names []string
	var oneSide []stats.Warning
	for name := range cand.Metrics {
		if _, ok := base.Metrics[name]; ok {
			names = append(names, name)
		} else {
			oneSide = append(oneSide, stats.Warning{Kind: WarnMetricOneSide, Side: stats.Candidate, Scenario: cand.Name, Metric: name})
		}
	}
	for name := range base.Metrics {
		if _, ok := cand.Metrics[name]; !ok {
			oneSide = append(oneSide, stats.Warning{Kind: WarnMetricOneSide, Side: stats.Baseline, Scenario: cand.Name, Metric: name})
		}
	}
	slices.SortFunc(oneSide, func(a, b stats.Warning) int {
		if a.Metric != b.Metric {
			return strings.Compare(a.Metric, b.Metric)
		}
		return strings.Compare(string(a.Side), string(b.Side))
	})
	slices.Sort(names)
	return names, oneSide
}

// CommonDraws says seed i drew the same guest state on both sides: their
// guests were given the same bytes (target, command line, kernel, and the
// tailgate that runs in them). Any byte apart, the kernel's random pool
// differs from the first and each side's seed is a draw of its own
// (docs/vms.md, "Seeds in virtual time").
func CommonDraws(base, cand *result.Result) bool {
	return base.Target.Equal(cand.Target) && base.Tailgate == cand.Tailgate &&
		base.Environment.KernelRelease == cand.Environment.KernelRelease &&
		base.Environment.KernelVersion == cand.Environment.KernelVersion
}

// scenarioComparison is one scenario's comparison while its metrics are
// estimated into sr.
type scenarioComparison struct {
	base, cand *result.Scenario
	opt        Options
	gate       result.GatePolicy
	pcts       []stats.Percentile
	sr         *ScenarioReport
}

// compareMetric estimates metric name's percentiles: as boots in virtual
// time (by seed when both sides' boots are seeded, paired when the seeds
// are common draws), paired by round when both sides' trials are (and the
// base is not stored), else trial against trial, widened by the
// calibration's excess for a stored base.
func (sc scenarioComparison) compareMetric(name string) {
	base, cand, opt, sr := sc.base, sc.cand, sc.opt, sc.sr
	if base.Metrics[name].Merged().Count() == 0 && cand.Metrics[name].Merged().Count() == 0 {
		sr.Warnings = append(sr.Warnings, stats.Warning{Kind: stats.WarnMetricNoEvents, Scenario: cand.Name, Metric: name})
		return
	}
	th := func(p stats.Percentile) (float64, bool) {
		return stats.ResolveThreshold(name, p.Name, sc.gate, opt.Thresholds)
	}
	bm, cm := base.Metrics[name], cand.Metrics[name]
	if opt.boots {
		if vs, seeded := stats.CompareSeeds(name, SampleOf(bm), SampleOf(cm), sc.pcts, th, opt.commonDraws); seeded {
			sr.Verdicts = append(sr.Verdicts, vs...)
			return
		}
		sr.Verdicts = append(sr.Verdicts, stats.CompareBoots(name, SampleOf(bm), SampleOf(cm), sc.pcts, th)...)
		return
	}
	if !opt.Stored {
		if vs, paired := stats.ComparePaired(name, SampleOf(bm), SampleOf(cm), sc.pcts, th); paired {
			sr.Verdicts = append(sr.Verdicts, vs...)
			return
		}
	}
	o := stats.TrialOptions{Percentiles: sc.pcts, Threshold: th, Resamples: opt.Resamples, GatedOnly: opt.gatedOnly}
	if opt.Stored && opt.Calibration != nil {
		o.TrialCentre = opt.Calibration.Statistic == stats.StatisticTrialCentre
		o.Excess = func(p stats.Percentile) float64 {
			sd, ok := opt.Calibration.Excess(cand.Name, name, p.Name)
			if !ok {
				if _, gated := th(p); gated {
					sr.Warnings = append(sr.Warnings, stats.Warning{Kind: stats.WarnNotCalibrated, Scenario: cand.Name, Metric: name, Percentile: p.Name})
				}
				return 0
			}
			return sd
		}
	}
	sr.Verdicts = append(sr.Verdicts, stats.CompareTrials(name, TrialHistograms(bm), TrialHistograms(cm), o)...)
}

// gateDiffers warns of every metric and percentile the two policies
// threshold differently.
func gateDiffers(scenario string, base, cand result.GatePolicy) []stats.Warning {
	var ws []stats.Warning
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
			ws = append(ws, stats.Warning{Kind: WarnGateDiffers, Scenario: scenario, Metric: k[0], Percentile: k[1], Base: b, Cand: c})
		}
	}
	slices.SortFunc(ws, func(a, b stats.Warning) int {
		if a.Metric != b.Metric {
			return strings.Compare(a.Metric, b.Metric)
		}
		return strings.Compare(a.Percentile, b.Percentile)
	})
	return ws
}

// checkCandidateGated returns ErrCandidateIncomplete, naming what is
// missing, when the candidate lacks trials or events of a metric the
// policy gates and the baseline has.
func checkCandidateGated(base, cand *result.Scenario, gate result.GatePolicy, cli []stats.Threshold) error {
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
		for _, p := range stats.PercentilesFor(gate, cli) {
			if _, ok := stats.ResolveThreshold(name, p.Name, gate, cli); ok {
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

// judgeReports judges the gated tests of all reports as one family, at
// the levels of opt.Look.
func judgeReports(reps []*Report, opt Options) {
	seq := opt.sequential()
	alpha, beta := seq.AlphaAt(opt.Look), seq.BetaAt(opt.Look)
	var family []*stats.Verdict
	for _, r := range reps {
		r.Look, r.Alpha, r.Beta = opt.Look, alpha, beta
		for si := range r.Scenarios {
			family = append(family, stats.GatedOf(r.Scenarios[si].Verdicts)...)
		}
	}
	for _, r := range reps {
		r.Tests = len(family)
	}
	stats.JudgeFamily(family, alpha, beta)
	stats.HoldInsideBands(family)
}
