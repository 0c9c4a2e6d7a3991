package result

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
)

// Input is a Result with the file it came from, for errors that name it.
type Input struct {
	Path   string
	Result *Result
}

// MergeFiles loads the Results of files, checks each with check when it
// is set, and merges them (Merge). A file named twice, by the same path or
// another (a link, ./x), is refused: merging it would count its trials
// twice.
func MergeFiles(files []string, check func(*Result) error) (*Result, error) {
	seen := make([]os.FileInfo, len(files))
	for i, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue // loading it says why
		}
		for j, prev := range seen[:i] {
			if prev == nil || !os.SameFile(prev, st) {
				continue
			}
			if files[j] == f {
				return nil, fmt.Errorf("%s is named twice; merging it would count its trials twice", f)
			}
			return nil, fmt.Errorf("%s and %s are the same file; merging it would count its trials twice", files[j], f)
		}
		seen[i] = st
	}
	var in []Input
	for _, f := range files {
		r, err := Load(f)
		if err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(r); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
		}
		in = append(in, Input{Path: f, Result: r})
	}
	return Merge(in)
}

// ErrMismatch reports Results that cannot be merged.
var ErrMismatch = errors.New("results do not match")

// ErrDuplicateTrial reports a trial found in two inputs: a Result (or a
// copy of it) given twice, or a merge of it given beside it. Merging would
// count its trials twice.
var ErrDuplicateTrial = errors.New("same trial in two results")

// trialID identifies a trial across Results. A trial has no id of its
// own, and the run's start time does not travel with it into a merge, so
// it is named by where it was measured and what it measured: the boot
// (boot_id) and the process (pid: the trial's worker, or the one process
// of an in-process run) that ran it, and its counts, duration and
// percentiles. A copy agrees in all of them; two real trials do not, even
// when a pid is reused on one boot (after pid_max forks) or is shared by
// the trials of an in-process run: they do not make the same number of
// operations in the same nanoseconds with the same percentiles.
type trialID struct {
	scenario, metric string
	bootID           string
	pid              int
	ops              uint64
	duration         float64
	summary          Summary
}

func idOf(scenario, metric string, t Trial) trialID {
	return trialID{scenario, metric, t.BootID, t.PID, t.Ops, t.Duration, t.Summary}
}

// Merge combines Results of the same target and environment, e.g. the shards
// of a CI matrix or repeated runs: scenarios are united and the trials of a
// scenario present in several inputs concatenate. Inputs of different
// schemas, targets or environments, or of a scenario run with different
// parameters, are an error naming both files.
func Merge(in []Input) (*Result, error) {
	if len(in) == 0 {
		return nil, errors.New("nothing to merge")
	}
	first := in[0]
	out := &Result{
		Schema:      first.Result.Schema,
		Tailgate:    first.Result.Tailgate,
		Started:     first.Result.Started,
		Finished:    first.Result.Finished,
		Target:      first.Result.Target,
		Environment: first.Result.Environment,
		Scenarios:   []Scenario{},
	}
	from := map[string]string{} // scenario → file it first came from
	for _, x := range in {
		if err := checkSameRun(first.Path, out, x); err != nil {
			return nil, err
		}
		mergeRun(out, x)
		for _, s := range x.Result.Scenarios {
			if err := mergeScenario(out, s, x.Path, from); err != nil {
				return nil, err
			}
		}
	}
	// After the checks above: inputs that do not match say that first.
	seen := map[trialID]string{} // trial → file it came from
	for _, x := range in {
		if err := checkTrials(seen, x); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out.Scenarios, func(a, b Scenario) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// checkSameRun refuses x when its schema, target or environment is not
// out's, which came from the file firstPath.
func checkSameRun(firstPath string, out *Result, x Input) error {
	r := x.Result
	if r.Schema != out.Schema {
		return fmt.Errorf("%w: %s has schema %d, %s has %d", ErrMismatch, firstPath, out.Schema, x.Path, r.Schema)
	}
	if !r.Target.Equal(out.Target) {
		return fmt.Errorf("%w: %s is target %s, %s is target %s; merge the runs of one target at a time",
			ErrMismatch, firstPath, describeTarget(out.Target), x.Path, describeTarget(r.Target))
	}
	if f, a, b := envDiff(out.Environment, r.Environment); f != "" {
		return fmt.Errorf("%w: environments differ in %s: %s has %q, %s has %q",
			ErrMismatch, f, firstPath, a, x.Path, b)
	}
	return nil
}

// mergeRun widens out's times to x's, and adds x's skipped scenarios and
// its being partial (with the first partial input's error).
func mergeRun(out *Result, x Input) {
	r := x.Result
	if r.Started.Before(out.Started) {
		out.Started = r.Started
	}
	if r.Finished.After(out.Finished) {
		out.Finished = r.Finished
	}
	for _, sk := range r.Skipped {
		if !slices.ContainsFunc(out.Skipped, func(o Skipped) bool { return o.Scenario == sk.Scenario }) {
			out.Skipped = append(out.Skipped, sk)
		}
	}
	if r.Partial {
		out.Partial = true
		if out.Error == "" {
			out.Error = x.Path + ": " + r.Error
		}
	}
}

// mergeScenario adds scenario s of the file path to out: as it is when out
// has no scenario of its name, else its trials to those of the same
// parameters and programs. from records the file each scenario first came
// from.
func mergeScenario(out *Result, s Scenario, path string, from map[string]string) error {
	have := out.Find(s.Name)
	if have == nil {
		if len(out.Scenarios) == MaxScenarios {
			return fmt.Errorf("%w: %s adds scenario %s to %d others; a Result holds at most %d, the most a run makes", ErrMismatch, path, s.Name, MaxScenarios, MaxScenarios)
		}
		out.Scenarios = append(out.Scenarios, cloneScenario(s))
		from[s.Name] = path
		return nil
	}
	if have.Params != s.Params {
		return fmt.Errorf("%w: scenario %s was run with different parameters in %s and %s",
			ErrMismatch, s.Name, from[s.Name], path)
	}
	if !slices.Equal(have.Executables, s.Executables) {
		return fmt.Errorf("%w: scenario %s ran other programs in %s than in %s (their paths or content differ)",
			ErrMismatch, s.Name, from[s.Name], path)
	}
	for name, m := range s.Metrics {
		hm := have.Metrics[name]
		if hm == nil {
			hm = &Metric{Unit: m.Unit}
			have.Metrics[name] = hm
		}
		if n := len(hm.Trials) + len(m.Trials); n > MaxTrials {
			return fmt.Errorf("%w: scenario %s metric %s: %s and %s together hold %d trials; a Result holds at most %d, the most a run makes: merge fewer",
				ErrMismatch, s.Name, name, from[s.Name], path, n, MaxTrials)
		}
		hm.Trials = append(hm.Trials, m.Trials...)
		if _, ok := hm.total(); !ok {
			return fmt.Errorf("%w: scenario %s metric %s: the trials of %s and %s together count more than 2^64 events",
				ErrMismatch, s.Name, name, from[s.Name], path)
		}
	}
	have.Trials += s.Trials
	return nil
}

// checkTrials refuses a trial of x that seen holds from another input,
// and adds x's trials to seen.
func checkTrials(seen map[trialID]string, x Input) error {
	for _, s := range x.Result.Scenarios {
		for _, name := range slices.Sorted(maps.Keys(s.Metrics)) {
			for i, t := range s.Metrics[name].Trials {
				id := idOf(s.Name, name, t)
				if p, ok := seen[id]; ok && p != x.Path {
					return fmt.Errorf("%w: scenario %s metric %s: trial %d of %s (boot %s, pid %d) is also in %s; each Result may be merged once, and a merged one holds its inputs",
						ErrDuplicateTrial, s.Name, name, i+1, x.Path, orNone(t.BootID), t.PID, p)
				}
				seen[id] = x.Path
			}
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func cloneScenario(s Scenario) Scenario {
	c := s
	c.Metrics = make(map[string]*Metric, len(s.Metrics))
	for k, m := range maps.All(s.Metrics) {
		mc := *m
		mc.Trials = slices.Clone(m.Trials)
		c.Metrics[k] = &mc
	}
	return c
}

func describeTarget(t Target) string {
	s := t.Name
	if t.Kernel != "" {
		s += " (" + t.Kernel + ")"
	}
	return s
}

// envDiff returns the first field in which two environments differ for the
// purpose of comparing measurements, or "".
func envDiff(a, b Environment) (field, va, vb string) {
	switch {
	case a.KernelRelease != b.KernelRelease:
		return "kernel_release", a.KernelRelease, b.KernelRelease
	case a.ConfigHash != b.ConfigHash:
		return "config_hash", a.ConfigHash, b.ConfigHash
	case a.CPUModel != b.CPUModel:
		return "cpu_model", a.CPUModel, b.CPUModel
	case a.CPUs != b.CPUs:
		return "cpus", fmt.Sprint(a.CPUs), fmt.Sprint(b.CPUs)
	}
	return "", "", ""
}
