package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
)

// Limits of a Result's names: a scenario's as a scenario file's (64
// bytes), a target's as --variant and a targets file take them, and a
// kernel release as uname(2) has it. A baseline's file name is made of
// the three (baseline.FileName) and must fit a file system's 255 bytes.
const (
	MaxNameLen          = 64
	MaxKernelReleaseLen = 64
)

// check checks what decoding leaves to a Result's writer. Every Result
// tailgate reads is untrusted (a candidate, a baseline, a merge's input,
// a history record, a guest's reply): it must be of this schema, its
// scenarios and metrics named once each, its names of printable text and
// within their limits, its counts not negative, each trial's summary that
// of its histogram. Errors wrap ErrCorrupt.
func check(r *Result) error {
	if r.Schema != SchemaVersion {
		return fmt.Errorf("%w: schema %d, this tailgate writes %d", ErrCorrupt, r.Schema, SchemaVersion)
	}
	if err := checkTarget(r); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, s := range r.Scenarios {
		switch {
		case s.Name == "":
			return fmt.Errorf("%w: scenario %d has no name", ErrCorrupt, i+1)
		case seen[s.Name]:
			return fmt.Errorf("%w: scenario %q appears twice", ErrCorrupt, s.Name)
		}
		seen[s.Name] = true
		if err := checkScenario(s); err != nil {
			return err
		}
	}
	for _, sk := range r.Skipped {
		if sk.Scenario == "" {
			return fmt.Errorf("%w: a skipped scenario has no name", ErrCorrupt)
		}
		if err := checkName("skipped scenario", sk.Scenario, MaxNameLen); err != nil {
			return err
		}
	}
	return nil
}

// checkTarget checks the names of r's target and environment.
func checkTarget(r *Result) error {
	// A guest's reply names no target: the host does.
	if err := checkName("target name", r.Target.Name, MaxNameLen); err != nil && r.Target.Name != "" {
		return err
	}
	if err := checkName("kernel release", r.Environment.KernelRelease, MaxKernelReleaseLen); err != nil && r.Environment.KernelRelease != "" {
		return err
	}
	if err := checkClock(r.Target); err != nil {
		return err
	}
	for _, s := range r.Target.Sysctls {
		if err := checkName("sysctl", s.Key, 4096); err != nil {
			return err
		}
	}
	for k := range r.Target.Env {
		if err := checkName("environment variable", k, 4096); err != nil {
			return err
		}
	}
	return nil
}

// checkClock refuses a clock that is none, or that its target could not
// have run on: a host runs in real time, only a virtual clock has a shift.
func checkClock(t Target) error {
	switch {
	case t.Clock != "" && t.Clock != ClockReal && t.Clock != ClockVirtual:
		return fmt.Errorf("%w: target clock %.40q is neither %s nor %s", ErrCorrupt, t.Clock, ClockReal, ClockVirtual)
	case t.Kind == "host" && t.Clock != "":
		return fmt.Errorf("%w: target %q is the host, which has no clock of its own, yet names clock %s", ErrCorrupt, t.Name, t.Clock)
	case t.IcountShift != nil && t.Clock != ClockVirtual:
		return fmt.Errorf("%w: target %q has an icount shift but runs on clock %s, not %s", ErrCorrupt, t.Name, t.ClockOf(), ClockVirtual)
	}
	return nil
}

// MaxThreshold is the largest gate threshold, as a fraction (1000%): past
// it a gate passes any slowdown a run could measure.
const MaxThreshold = 10

// checkGate refuses a gate policy's threshold that is not a fraction in
// [0, MaxThreshold] (what names the policy: "gate").
func checkGate(scenario, what string, g GatePolicy) error {
	for m, ps := range g {
		if err := checkName(fmt.Sprintf("scenario %q: %s metric", scenario, what), m, 4096); err != nil {
			return err
		}
		for p, t := range ps {
			if err := checkName(fmt.Sprintf("scenario %q: %s percentile", scenario, what), p, 64); err != nil {
				return err
			}
			if !(t >= 0 && t <= MaxThreshold) {
				return fmt.Errorf("%w: scenario %q: %s %s %s threshold %g is not between 0 and %g (%g%%)", ErrCorrupt, scenario, what, m, p, t, float64(MaxThreshold), 100*float64(MaxThreshold))
			}
		}
	}
	return nil
}

// definitionGate is the gate block of a scenario's definition, which a
// Result written before Scenario.Gate existed is judged by.
func definitionGate(raw json.RawMessage) (GatePolicy, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var def struct {
		Gate GatePolicy `json:"gate"`
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		return nil, fmt.Errorf("%w: its definition: %v", ErrCorrupt, err)
	}
	return def.Gate, nil
}

// checkScenario checks one named scenario: its count of trials, its
// names and those of its gate, tracers and metrics, and its metrics'
// trials.
func checkScenario(s Scenario) error {
	if s.Trials < 0 || s.Trials > MaxTrials {
		return fmt.Errorf("%w: scenario %q: %d trials; a run makes 0 to %d", ErrCorrupt, s.Name, s.Trials, MaxTrials)
	}
	if err := checkName("scenario name", s.Name, MaxNameLen); err != nil {
		return err
	}
	if err := checkGate(s.Name, "gate", s.Gate); err != nil {
		return err
	}
	if dg, err := definitionGate(s.Definition); err != nil {
		return fmt.Errorf("scenario %q: %w", s.Name, err)
	} else if err := checkGate(s.Name, "definition's gate", dg); err != nil {
		return err
	}
	for _, tr := range s.Tracers {
		if err := checkName(fmt.Sprintf("scenario %q: tracer", s.Name), tr.Name, 4096); err != nil {
			return err
		}
	}
	for name, m := range s.Metrics {
		if name == "" {
			return fmt.Errorf("%w: scenario %q has a metric with no name", ErrCorrupt, s.Name)
		}
		if err := checkName(fmt.Sprintf("scenario %q: metric", s.Name), name, 4096); err != nil {
			return err
		}
		if err := checkMetricTrials(fmt.Sprintf("scenario %q metric %q", s.Name, name), m.Trials); err != nil {
			return err
		}
	}
	return nil
}

// checkMetricTrials checks the trials of a metric (metric names it as
// errors say it): no negative duration or cost, each summary its
// histogram's, no trial a copy of another (the identity merge tells
// trials apart by): the statistics resample trials as independent runs,
// and ten copies of one would pass for ten runs that agree.
func checkMetricTrials(metric string, trials []Trial) error {
	seen := make(map[trialID]int, len(trials))
	for j, t := range trials {
		id := idOf("", "", t)
		if i, dup := seen[id]; dup {
			return fmt.Errorf("%w: %s trial %d is a copy of trial %d (boot %s, pid %d, its operations, duration and percentiles alike); each trial must be a run of its own", ErrCorrupt, metric, j+1, i+1, orNone(t.BootID), t.PID)
		}
		seen[id] = j
	}
	for j, t := range trials {
		where := fmt.Sprintf("%s trial %d", metric, j+1)
		switch {
		case t.Duration < 0:
			return fmt.Errorf("%w: %s: duration %g s", ErrCorrupt, where, t.Duration)
		case t.TracerCostNs < 0:
			return fmt.Errorf("%w: %s: tracer cost %g ns", ErrCorrupt, where, t.TracerCostNs)
		case t.PhaseSeed != 0 && t.Seed == 0:
			return fmt.Errorf("%w: %s: phase seed %d of no layout seed; a phase is drawn within a seeded layout", ErrCorrupt, where, t.PhaseSeed)
		}
		if want := Summarize(t.Histogram); !sameSummary(t.Summary, want) {
			return fmt.Errorf("%w: %s: its summary (count %d, p99 %g, max %g) is not its histogram's (count %d, p99 %g, max %g)",
				ErrCorrupt, where, t.Summary.Count, t.Summary.P99, t.Summary.Max, want.Count, want.P99, want.Max)
		}
	}
	return nil
}

// sameSummary reports whether s is want, the summary of a trial's
// histogram: the percentiles derived data, the histogram the truth.
func sameSummary(s, want Summary) bool {
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	return s.Count == want.Count && same(s.P50, want.P50) && same(s.P90, want.P90) &&
		same(s.P99, want.P99) && same(s.P999, want.P999) && same(s.Max, want.Max)
}

// checkName refuses a name (what names it: "scenario name") that is
// empty, longer than limit bytes, not UTF-8, or holds a control
// character, a line or paragraph separator or a bidirectional override:
// names are printed, matched and made into file names.
func checkName(what, name string, limit int) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: a %s is empty", ErrCorrupt, what)
	case len(name) > limit:
		return fmt.Errorf("%w: %s %.40q… is %d bytes; the limit is %d", ErrCorrupt, what, name, len(name), limit)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %s %q is not UTF-8", ErrCorrupt, what, name)
	case strings.ContainsFunc(name, plaintext.Hides):
		return fmt.Errorf("%w: %s %q holds a control character", ErrCorrupt, what, name)
	}
	return nil
}
