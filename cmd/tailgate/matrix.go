package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vmtest"
)

const matrixUsage = `usage: tailgate matrix TARGET... [SCENARIO...] [flags]

Runs the scenarios on every target, trials interleaved (round 1: A B C,
round 2: A B C, ...) so that drift in the machine hits all targets alike,
then compares every target with the first, the reference, with the same
statistics as 'tailgate compare'.

Targets, in the order given (at least two):
  --kernel 'SPEC [CMDLINE]'   a VM booting SPEC (see 'tailgate kernels list'),
                              with CMDLINE appended to its kernel command line
  --target NAME               a VM target from the targets file
  --variant NAME[:KEY=VALUE[,KEY=VALUE...]]
                              this host, with the sysctls set for the variant's
                              trials and restored after each; --variant NAME
                              alone is the host as it is

  tailgate matrix --kernel debian:6.1-generic --kernel debian:6.1-rt timer-1ms
  tailgate matrix --variant base --variant 'nomig:kernel.timer_migration=0' timer-1ms
  tailgate matrix --kernel debian:6.1-cloud --kernel 'debian:6.1-cloud nohz_full=1' timer-1ms

A VM target boots once per round; a host variant attaches its tracers once
per round. Each round runs the scenarios' warmup, then one trial.
exit 0 no regression against the reference, 1 a regression (or, with
--strict, an inconclusive verdict), 2 bad usage, 3 a broken run or a sysctl
that could not be restored.

`

// matrixTarget is one column of the matrix: where it runs and, for a host
// variant, the sysctls in force during its trials.
type matrixTarget struct {
	execTarget
	sysctls     []sysctl.Setting
	description string
}

// matrixEnv is what a matrix run touches outside itself; tests replace it.
type matrixEnv struct {
	// exec runs one round's request on a target.
	exec func(ctx context.Context, t execTarget, tf *targetFlags, req runner.Request, p *progress.Reporter) (*result.Result, error)
	// sysctlRoot is /proc/sys.
	sysctlRoot string
	// orderSeed, when non-zero, seeds a same-job gate's random order
	// within rounds (tests); otherwise the system's random source does.
	orderSeed uint64
}

func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runMatrix(ctx, args, stdout, stderr, matrixEnv{exec: execute, sysctlRoot: sysctl.Root})
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer, env matrixEnv) error {
	fs := newFlagSet("matrix")
	var f runFlags
	f.register(fs)
	var tf targetFlags
	tf.register(fs)
	var rf reportFlags
	rf.register(fs)
	tf.registerVariant(fs, "a host variant `NAME[:KEY=VALUE,...]`: this host with those sysctls set during its trials (repeatable)")
	fs.StringVar(&f.output, "o", "", "write each target's merged Result to `FILE`-TARGET.json")
	retries := fs.Int("retries", 1, "run a round again this many times when it breaks (a guest oops, a garbled result); its broken try is discarded")
	setUsage(fs, stdout, matrixUsage)
	names, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ss, err := lookupScenarios(names)
	if err != nil {
		return err
	}
	if err := checkThresholdMetrics(rf.thresholds, scenarioMetrics(ss)); err != nil {
		return err
	}
	// Every format renders a matrix as it renders a comparison.
	outs, err := rf.resolveOutputs()
	if err != nil {
		return err
	}
	targets, err := matrixTargets(&tf)
	if err != nil {
		return err
	}
	if len(targets) < 2 {
		return usagef("a matrix needs at least two targets (--kernel, --target or --variant), got %d; see tailgate matrix -h", len(targets))
	}
	if err := checkTargetOutputs(f.output, targets); err != nil {
		return err
	}
	// A key this kernel lacks is a typo until proven otherwise: say so
	// before anything runs.
	if err := checkVariantKeys(targets, env.sysctlRoot); err != nil {
		return err
	}
	if _, err := f.request(ss, nil); err != nil {
		return err
	}

	if *retries < 0 {
		return usagef("--retries must not be negative, got %d", *retries)
	}
	plan := roundPlan{rounds: plannedRounds(&f, ss), retries: *retries}
	results, _, runErr := runRounds(ctx, targets, ss, &f, &tf, plan, env, stderr)
	// What was measured is kept even when the matrix was cut short.
	if err := writeTargetResults(f.output, targets, results, runErr, stderr); err != nil {
		return err
	}

	var mts []report.MatrixTarget
	for i, t := range targets {
		mts = append(mts, report.MatrixTarget{Name: t.name, Description: t.description, Result: results[i]})
	}
	m, err := report.CompareMatrix(mts, rf.options())
	if err != nil {
		return compareError(err)
	}
	if err := writeReports(m, outs, stdout, stderr); err != nil {
		return err
	}
	return verdictError(m, rf.strict, "matrix", stderr)
}

// runTrial runs one round's request on t, with t's sysctls in force for
// exactly that long: they are restored when it returns, however it
// returns (an error, an interrupt, a panic).
func runTrial(ctx context.Context, t matrixTarget, tf *targetFlags, req runner.Request, p *progress.Reporter, env matrixEnv) (res *result.Result, err error) {
	if len(t.sysctls) > 0 {
		applied, aerr := sysctl.Apply(env.sysctlRoot, t.sysctls)
		if aerr != nil {
			var re *sysctl.RestoreError
			if errors.As(aerr, &re) {
				return nil, &restoreFailure{aerr}
			}
			return nil, infra(fmt.Errorf("variant %s: %w", t.name, aerr))
		}
		defer func() {
			if rerr := applied.Restore(); rerr != nil {
				err = &restoreFailure{errors.Join(rerr, err)}
			}
		}()
	}
	return env.exec(ctx, t.execTarget, tf, req, p)
}

// recoverSysctls restores the sysctls under root that a tailgate run
// which died (SIGKILL) left changed, from its journal (sysctl.Recover),
// saying so; what it cannot put back is a restoreFailure naming the
// command that does.
func recoverSysctls(root string) error {
	restored, err := sysctl.Recover(root)
	for _, s := range restored {
		// No writer reaches here: the line goes straight to standard error.
		fmt.Fprintf(os.Stderr, "tailgate: restored sysctl %s, left changed by a tailgate run that died\n", s)
	}
	if err != nil {
		return &restoreFailure{err}
	}
	return nil
}

// probeVariants writes each variant's sysctls and restores them at once
// (sysctl.Probe): a read-only key or a value the kernel rejects is exit 2
// before any trial, in one line naming the key and the value.
func probeVariants(targets []matrixTarget, root string) error {
	for _, t := range targets {
		if err := sysctl.Probe(root, t.sysctls); err != nil {
			var pe *sysctl.ProbeError
			if errors.As(err, &pe) {
				return usagef("variant %s: %v; drop it or give it a value this kernel takes", t.name, err)
			}
			return &restoreFailure{err}
		}
	}
	return nil
}

// retryable reports whether a round that failed with err may run again:
// a failure of the machinery, not an interrupt, bad input or a sysctl
// left changed.
func retryable(ctx context.Context, err error) bool {
	var u *usageError
	var rf *restoreFailure
	return err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) &&
		!errors.As(err, &u) && !errors.As(err, &rf) && !errors.Is(err, runner.ErrPrivileges)
}

// restoreFailure is a sysctl left changed on this machine: the loudest
// failure a matrix has, since it outlives the run.
type restoreFailure struct{ err error }

func (e *restoreFailure) Error() string {
	return "SYSCTLS NOT RESTORED, this machine is left changed: " + e.err.Error()
}
func (e *restoreFailure) Unwrap() error { return e.err }

// fixTrials makes a merged Result's scenario definitions say how many
// trials it holds: each round ran with trials: 1.
func fixTrials(r *result.Result) *result.Result {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		var def scenarios.Scenario
		if len(s.Definition) == 0 || string(s.Definition) == "null" || json.Unmarshal(s.Definition, &def) != nil {
			continue
		}
		def.Trials = s.Trials
		if b, err := json.Marshal(def); err == nil {
			s.Definition = b
		}
	}
	return r
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// parseVariant reads NAME[:KEY=VALUE[,KEY=VALUE...]].
func parseVariant(s string) (matrixTarget, error) {
	name, settings, _ := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !variantName.MatchString(name) {
		return matrixTarget{}, usagef("--variant %q: name %q must be letters, digits, '.', '_' or '-' (it names the Result file); want NAME[:KEY=VALUE,...]", s, name)
	}
	t := matrixTarget{execTarget: execTarget{name: name}, description: "host"}
	if strings.TrimSpace(settings) == "" {
		return t, nil
	}
	var descr []string
	for _, kv := range strings.Split(settings, ",") {
		st, err := sysctl.Parse(kv)
		if err != nil {
			return matrixTarget{}, usagef("--variant %s: %v", name, err)
		}
		if slices.ContainsFunc(t.sysctls, func(o sysctl.Setting) bool { return o.Key == st.Key }) {
			return matrixTarget{}, usagef("--variant %s: %s set twice", name, st.Key)
		}
		t.sysctls = append(t.sysctls, st)
		descr = append(descr, st.String())
	}
	t.description = "host, " + strings.Join(descr, ", ")
	return t, nil
}

// matrixTargets builds the targets in the order their flags were given:
// the first is the reference.
func matrixTargets(tf *targetFlags) ([]matrixTarget, error) {
	if err := tf.check(); err != nil {
		return nil, err
	}
	var out []matrixTarget
	var named []execTarget
	if len(tf.names) > 0 {
		byName := *tf
		byName.kernels, byName.vm = nil, false
		var err error
		if named, err = byName.targets(); err != nil {
			return nil, err
		}
	} else if tf.file != "" {
		return nil, usagef("--targets names a file but no --target NAME picks from it")
	}
	for _, fl := range tf.order {
		switch fl.name {
		case "kernel":
			out = append(out, kernelTarget(tf, fl.value))
		case "vm":
			if len(tf.kernels) == 0 {
				out = append(out, kernelTarget(tf, vmtest.DefaultKernelSpec))
			}
		case "target":
			for _, t := range named {
				if t.name == fl.value {
					out = append(out, matrixTarget{execTarget: t, description: describeVM(t.vm)})
					break
				}
			}
		case "variant":
			t, err := parseVariant(fl.value)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	seen := map[string]bool{}
	for _, t := range out {
		if seen[t.name] {
			return nil, usagef("target %s given twice; give variants distinct names", t.name)
		}
		seen[t.name] = true
	}
	return out, nil
}

// kernelTarget is a --kernel 'SPEC [CMDLINE]' target: the command line
// after the spec is appended to --cmdline's, and named in the target's
// name so that one kernel can appear with several.
func kernelTarget(tf *targetFlags, value string) matrixTarget {
	fields := strings.Fields(value)
	spec := ""
	if len(fields) > 0 {
		spec = fields[0]
	}
	own := fields[min(1, len(fields)):]
	c := *tf
	c.cmdline = strings.TrimSpace(tf.cmdline + " " + strings.Join(own, " "))
	t := c.adhoc(spec)
	if len(own) > 0 {
		name := strings.TrimPrefix(spec, "debian:")
		if !strings.HasPrefix(spec, "debian:") {
			name = filepath.Base(spec)
		}
		for _, w := range own {
			name += "+" + strings.NewReplacer("=", "-", "/", "-", ",", "-").Replace(w)
		}
		t.name, t.vm.Name = name, name
	}
	return matrixTarget{execTarget: t, description: describeVM(t.vm)}
}

func describeVM(t *vmtest.Target) string {
	d := t.Kernel
	if t.Cmdline != "" {
		d += " " + t.Cmdline
	}
	return d
}
