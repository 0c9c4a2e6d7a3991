package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// VirtualTimeLine says in one line what a time in virtual time counts;
// shift is the icount shift, in decimal.
func VirtualTimeLine(shift string) string {
	ns := "2^" + shift + " ns"
	if n, err := strconv.Atoi(shift); err == nil && n >= 0 && n < 31 {
		ns = fmt.Sprintf("%d ns", 1<<n)
	}
	return "virtual time: each guest instruction counts " + ns + " (QEMU icount), so the times are path length, scheduling decisions and timer handling; TLB, cache, MSR and device costs are not in them (docs/vms.md)"
}

// fieldLabels word the fields a warning names.
var fieldLabels = map[string]string{
	stats.FieldKernelRelease: "kernel release",
	stats.FieldConfigHash:    "kernel config hash",
	stats.FieldCPUModel:      "CPU model",
	stats.FieldCPUs:          "CPU count",
	stats.FieldAccel:         "target accel",
	stats.FieldKind:          "target kind",
	stats.FieldVCPUs:         "target vCPUs",
	stats.FieldMemMiB:        "target memory (MiB)",
	stats.FieldCmdline:       "target kernel cmdline",
	stats.FieldTarget:        "target",
	stats.FieldTailgate:      "tailgate (how it measures may have changed)",
}

func fieldLabel(f string) string {
	if l, ok := fieldLabels[f]; ok {
		return l
	}
	return f
}

// WarningText words w as a two-sided report shows it.
func WarningText(w stats.Warning) string { return warningText(w, "the baseline", "the candidate") }

// warningText words w, naming the two sides base and cand where the
// wording refers to a whole run ("the baseline" in a report, the reference
// target's name in a matrix).
func warningText(w stats.Warning, base, cand string) string {
	name := func(r stats.Role) string {
		if r == stats.Baseline {
			return base
		}
		return cand
	}
	switch w.Kind {
	case report.WarnEnvironment:
		return fmt.Sprintf("environments differ: %s is %q in %s, %q in %s", fieldLabel(w.Field), w.Base, base, w.Cand, cand)
	case report.WarnPartial:
		return fmt.Sprintf("%s run is partial (%s): trials are missing", name(w.Side), w.Detail)
	case report.WarnEmulated:
		return fmt.Sprintf("%s ran under TCG: timings are emulated and say little about real hardware", name(w.Side))
	case report.WarnVirtualTime:
		return VirtualTimeLine(w.Detail)
	case report.WarnScenarioOneSide:
		if w.Side == stats.Baseline {
			return fmt.Sprintf("scenario %s is in %s only; not compared", w.Scenario, base)
		}
		return fmt.Sprintf("scenario %s is not in %s; not compared", w.Scenario, base)
	case report.WarnParamsDiffer:
		if w.Detail != "" {
			return fmt.Sprintf("parameters differ: %s; compared because forced", w.Detail)
		}
		return fmt.Sprintf("parameters differ (baseline %s, candidate %s); compared because forced", w.Base, w.Cand)
	case report.WarnTracerVariant:
		return fmt.Sprintf("the %s tracer attached as %s in %s and as %s in %s: their programs cost differently, and part of a difference may be the tracer's", w.Detail, w.Base, base, w.Cand, cand)
	case report.WarnSingleStepped:
		return steppedText(w, base, cand)
	case report.WarnDefinitionUnreadable:
		return fmt.Sprintf("scenario definition unreadable (%s); p99 of every metric gated", w.Detail)
	case stats.WarnInterference:
		return fmt.Sprintf("other work took over %.0f%% of the measured CPUs' time in %d of %s trials of %s and %d of %s of %s (at most %s): disturbed trials spread the comparison, so it needs more of them; a quieter CPU or a runner of its own narrows it", 100*report.DisturbedShare, w.BaseCount, w.Base, base, w.CandCount, w.Cand, cand, w.Detail)
	case stats.WarnLevelUnreachable:
		if w.Side == stats.Candidate { // boots in virtual time
			return fmt.Sprintf("%s: %s of the candidate are too few for the rank-sum test to reach its level (%s) whatever the data; it needs at least %d", w.Percentile, english.Count(w.BaseCount, "boot"), w.Detail, w.CandCount)
		}
		return fmt.Sprintf("%s: %d rounds are too few for the exact test to reach its level (%s) whatever the data; it needs at least %d", w.Percentile, w.BaseCount, w.Detail, w.CandCount)
	case stats.WarnNuisanceBand:
		return fmt.Sprintf("nuisance band of %s %s across %s: ±%s, what layout and start phase alone move it (docs/vms.md)", w.Metric, w.Percentile, english.Count(w.BaseCount, "seeded boot"), pct(w.Band))
	case stats.WarnInsideBand:
		return fmt.Sprintf("%s: unreachable: its threshold is inside its nuisance band (±%s across %s), so it is never decided either way; gate it wider, or leave it ungated (docs/vms.md)", w.Percentile, pct(w.Band), english.Count(w.BaseCount, "seed"))
	case report.WarnGateDiffers:
		return gateDiffersText(w)
	case report.WarnMetricOneSide:
		return fmt.Sprintf("metric %s is in the %s only; not compared", w.Metric, w.Side)
	case stats.WarnMetricNoEvents:
		return fmt.Sprintf("metric %s has no events on either side; not compared", w.Metric)
	case stats.WarnNoEvents:
		return fmt.Sprintf("%s has no events", w.Side)
	case stats.WarnFewTailEvents:
		var few []string
		if w.Side == stats.Baseline || w.Side == stats.Both {
			few = append(few, fmt.Sprintf("baseline %d", w.BaseCount))
		}
		if w.Side == stats.Candidate || w.Side == stats.Both {
			few = append(few, fmt.Sprintf("candidate %d", w.CandCount))
		}
		return fmt.Sprintf("few events beyond %s (%s; want ≥ %d): run longer or more trials", w.Percentile, strings.Join(few, ", "), stats.MinTailEvents)
	case stats.WarnDecidedOnFewTail:
		return decidedOnFewTailText(w, base, cand)
	case stats.WarnOneTrial:
		if w.Side == stats.Both {
			return "one trial per side: the interval ignores trial-to-trial variation"
		}
		return fmt.Sprintf("one %s trial: the interval ignores trial-to-trial variation", w.Side)
	case stats.WarnWithinRunOnly:
		on := w.Target
		if w.Detail != "" {
			on += " (kernel " + w.Detail + ")"
		}
		return fmt.Sprintf("intervals cover within-run noise only: %s is stored from another run; run `tailgate calibrate SCENARIO --baseline DIR` on %s to measure the between-run spread", base, on)
	case stats.WarnNotCalibrated:
		return fmt.Sprintf("no calibration for %s %s: its interval covers within-run noise only", w.Metric, w.Percentile)
	case report.WarnCalibrationMismatch:
		return fmt.Sprintf("the calibration was measured with %s %q, %s with %q; applied all the same", fieldLabel(w.Field), w.Cand, base, w.Base)
	}
	return string(w.Kind)
}

// decidedOnFewTailText words a WarnDecidedOnFewTail in one line: the
// events short of the rule, and why the verdict stands all the same.
func decidedOnFewTailText(w stats.Warning, base, cand string) string {
	few := fmt.Sprintf("%s %d", base, w.BaseCount)
	if w.Side == stats.Candidate {
		few = fmt.Sprintf("%s %d", cand, w.CandCount)
	} else if w.Side == stats.Both {
		few = fmt.Sprintf("%s %d, %s %d", base, w.BaseCount, cand, w.CandCount)
	}
	why := "the whole interval is past the threshold"
	if w.Detail == stats.StarvedCollapse {
		why = fmt.Sprintf("%s did %s events a trial, %s %s: the slower side is short of events because it is slower", cand, w.Cand, base, w.Base)
	}
	return fmt.Sprintf("%s decided on few events beyond it (%s; the rule wants %d) because %s", w.Percentile, few, stats.MinTailEvents, why)
}

// gateDiffersText words a WarnGateDiffers.
func gateDiffersText(w stats.Warning) string {
	what := "every metric"
	if w.Metric != "*" {
		what = w.Metric
	}
	side := func(v string) string {
		if v == "" {
			return "does not gate it"
		}
		return "gates it at " + v
	}
	return fmt.Sprintf("the candidate's gate block differs at %s %s (the baseline %s, the candidate %s): the baseline's policy is applied", what, w.Percentile, side(w.Base), side(w.Cand))
}

// steppedText words a WarnSingleStepped.
func steppedText(w stats.Warning, base, cand string) string {
	what := w.Base
	if what == "" {
		what = "an instruction"
	}
	where := ""
	switch w.Side {
	case stats.Baseline:
		where = " in " + base
	case stats.Candidate:
		where = " in " + cand
	}
	return fmt.Sprintf("%s begins with %s (%s)%s, which the kernel single-steps under its uprobe on every call: "+
		"two traps (up to 12 µs on a VM) are in each call's measured time and dilute a change in the function's own; "+
		"one that begins with a push (as most functions that call others do) is emulated instead",
		w.Detail, what, w.Cand, where)
}

// warningStrings words a list of warnings.
func warningStrings(ws []stats.Warning) []string {
	if len(ws) == 0 {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = WarningText(w)
	}
	return out
}

// stoppingText says whether and why a gate run stopped, for a report's
// last line.
func stoppingText(s report.Stopping) string {
	trials := fmt.Sprintf("%d %s per side", s.Trials, english.Plural(s.Trials, "trial", "trials"))
	at := fmt.Sprintf("after look %d (%s)", s.Look, trials)
	if s.Look == 0 {
		at = "after one look (" + trials + ")"
	}
	switch s.Reason {
	case report.StopDecided:
		return fmt.Sprintf("stopped %s: every gated test is decided", at)
	case report.StopRegression:
		return fmt.Sprintf("stopped %s: %d %s confirmed, the gate fails whatever the %d undecided %s", at,
			s.Regressions, english.Plural(s.Regressions, "regression", "regressions"), s.Undecided, english.Plural(s.Undecided, "test would show", "tests would show"))
	case report.StopBudget:
		return fmt.Sprintf("stopped %s: the budget is spent with %d of %d gated %s undecided (inconclusive)", at, s.Undecided, s.Gated, english.Plural(s.Gated, "test", "tests"))
	case report.StopSingleLook:
		return fmt.Sprintf("compared once (%s): %d of %d gated %s undecided (inconclusive)", trials, s.Undecided, s.Gated, english.Plural(s.Gated, "test", "tests"))
	}
	return fmt.Sprintf("going on %s: %d of %d gated %s undecided", at, s.Undecided, s.Gated, english.Plural(s.Gated, "test", "tests"))
}

// runText words how a gate run went: "12 rounds in 16s; stopped after
// look 3 (12 trials per side): every gated test is decided".
func runText(ri report.RunInfo) string {
	sliced := ""
	if ri.Slice > 0 {
		sliced = fmt.Sprintf(", base and head taking turns in %s slices", ri.Slice)
	}
	return fmt.Sprintf("%d %s in %.0fs%s; %s", ri.Rounds, english.Plural(ri.Rounds, "round", "rounds"), ri.Seconds, sliced, stoppingText(ri.Stop))
}

// detectionText words a Detection: "syscall.read p99 +12% (threshold
// ±10%)".
func detectionText(d report.Detection) string {
	return fmt.Sprintf("%s %s %s (threshold ±%s)", d.Metric, d.Percentile, signedPct(d.Detectable), pct(d.Threshold))
}

// detectionLine words what a comparison's gated tests could catch, in one
// line ("smallest shift it could catch: syscall.read p99 +12% (threshold
// ±10%)"), and says what would sharpen those that could not catch a shift
// of their own threshold. "" when there is nothing to say.
func detectionLine(ds []report.Detection) string {
	if len(ds) == 0 {
		return ""
	}
	same := true
	for _, d := range ds {
		same = same && d.Threshold == ds[0].Threshold
	}
	parts := make([]string, len(ds))
	blunt := 0
	for i, d := range ds {
		if same {
			parts[i] = fmt.Sprintf("%s %s %s", d.Metric, d.Percentile, signedPct(d.Detectable))
		} else {
			parts[i] = detectionText(d)
		}
		if d.Blunt() {
			blunt++
		}
	}
	line := "smallest shift it could catch: " + strings.Join(parts, ", ")
	if same {
		line += fmt.Sprintf(" (threshold ±%s)", pct(ds[0].Threshold))
	}
	if blunt > 0 {
		line += fmt.Sprintf("; above the threshold for %d of %d: more --budget, another --duration (docs/statistics.md says which way) or a quieter CPU lowers it", blunt, len(ds))
	}
	return line
}

func signedPct(f float64) string { return "+" + pct(f) }

func pct(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}
