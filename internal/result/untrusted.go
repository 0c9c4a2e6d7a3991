package result

import (
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

// checkScenario checks one named scenario: its count of trials, its
// names and those of its gate, tracers and metrics, and its metrics'
// trials.
func checkScenario(s Scenario) error {
	if s.Trials < 0 {
		return fmt.Errorf("%w: scenario %q: %d trials", ErrCorrupt, s.Name, s.Trials)
	}
	if err := checkName("scenario name", s.Name, MaxNameLen); err != nil {
		return err
	}
	for m, ps := range s.Gate {
		if err := checkName(fmt.Sprintf("scenario %q: gate metric", s.Name), m, 4096); err != nil {
			return err
		}
		for p := range ps {
			if err := checkName(fmt.Sprintf("scenario %q: gate percentile", s.Name), p, 64); err != nil {
				return err
			}
		}
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
// histogram's.
func checkMetricTrials(metric string, trials []Trial) error {
	for j, t := range trials {
		where := fmt.Sprintf("%s trial %d", metric, j+1)
		switch {
		case t.Duration < 0:
			return fmt.Errorf("%w: %s: duration %g s", ErrCorrupt, where, t.Duration)
		case t.TracerCostNs < 0:
			return fmt.Errorf("%w: %s: tracer cost %g ns", ErrCorrupt, where, t.TracerCostNs)
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
