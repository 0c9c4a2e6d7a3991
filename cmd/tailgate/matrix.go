package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/vmtest"
)

const matrixUsage = `usage: tailgate matrix TARGET... [SCENARIO...] [flags]

Runs the scenarios on every target, trials interleaved, the order
alternating (round 1: A B C, round 2: C B A, round 3: A B C, ...) so that
drift in the machine hits all targets alike and no target always runs
right after another, then compares every target with the first, the
reference, with the same statistics as 'tailgate compare'.

Targets, in the order given (at least two):
  --kernel 'SPEC [CMDLINE]'   a VM booting SPEC (see 'tailgate kernels list'),
                              with CMDLINE appended to its kernel command line
  --target NAME               a VM target from the targets file
  --variant NAME[:KEY=VALUE[,KEY=VALUE...]]
                              this host, with the sysctls set for the variant's
                              trials and restored after each; --variant NAME
                              alone is the host as it is; dir=PATH runs the
                              scenario file from PATH (a checkout of the same
                              tree), env.NAME=VALUE adds to the exec
                              workload's environment

  tailgate matrix --kernel debian:6.1-generic --kernel debian:6.1-rt timer-1ms
  tailgate matrix --variant base --variant 'nomig:kernel.timer_migration=0' timer-1ms
  tailgate matrix --kernel debian:6.1-cloud --kernel 'debian:6.1-cloud nohz_full=1' timer-1ms

A VM target boots once per round; a host variant attaches its tracers once
per round. Each round runs the scenarios' warmup, then one trial.
exit 0 no regression against the reference, 1 a regression (or, with
--strict, an inconclusive verdict), 2 bad usage, 3 a broken run or a sysctl
that could not be restored.

`

// matrixEnv is what a matrix or a same-job gate touches outside itself;
// tests replace it.
type matrixEnv struct {
	// wrap, when set, stands in for each target of a host or a VM (inside
	// a variant's sysctls).
	wrap func(engine.Target) engine.Target
	// sysctlRoot is /proc/sys.
	sysctlRoot string
	// orderSeed, when non-zero, seeds a same-job gate's random order
	// within rounds (tests); otherwise the system's random source does.
	orderSeed uint64
}

func cmdMatrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runMatrix(ctx, args, stdout, stderr, matrixEnv{sysctlRoot: sysctl.Root})
}

func runMatrix(ctx context.Context, args []string, stdout, stderr io.Writer, env matrixEnv) (err error) {
	fs := newFlagSet("matrix")
	var f runFlags
	f.register(fs)
	var tf targetFlags
	tf.register(fs)
	var rf reportFlags
	rf.register(fs)
	tf.registerVariant(fs, "a host variant `NAME[:KEY=VALUE,...]`: this host, "+variantKeys+" (repeatable)")
	fs.StringVar(&f.output, "o", "", "write each target's merged Result to `FILE`-TARGET.json")
	retries := fs.Int("retries", 1, "run a round again this many times when it breaks (a guest oops, a garbled result); its broken try is discarded")
	setUsage(fs, stdout, matrixUsage)
	names, err := parseFlags(fs, args)
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
	defer func() { writeJUnitErrors(outs, "matrix", err, stderr) }()
	targets, descriptions, err := matrixTargets(&tf, env)
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
	if err := engine.CheckVariants(targets, env.sysctlRoot, stderr); err != nil {
		return err
	}
	spec := f.spec(ss)
	if err := spec.Check(); err != nil {
		return err
	}

	if *retries < 0 {
		return usagef("--retries must not be negative, got %d", *retries)
	}
	plan := engine.Plan{Rounds: engine.PlannedRounds(spec), Retries: *retries}
	results, _, runErr := engine.Rounds(ctx, targets, spec, plan, stderr)
	// What was measured is kept even when the matrix was cut short.
	if err := writeTargetResults(f.output, targets, results, runErr, stderr); err != nil {
		return err
	}

	var mts []report.MatrixTarget
	for i, t := range targets {
		mts = append(mts, report.MatrixTarget{Name: t.Name(), Description: descriptions[i], Result: results[i]})
	}
	m, err := report.CompareMatrix(mts, rf.options())
	if err != nil {
		return engine.CompareError(err)
	}
	if err := writeReports(m, outs, stdout, stderr); err != nil {
		return err
	}
	return verdictError(m, rf.strict, "matrix", stderr)
}

// matrixTargets builds the targets in the order their flags were given
// (the first is the reference), and describes each.
func matrixTargets(tf *targetFlags, env matrixEnv) ([]engine.Target, []string, error) {
	if err := tf.check(); err != nil {
		return nil, nil, err
	}
	var out []engine.Target
	var descr []string
	add := func(t engine.Target, d string) {
		if env.wrap != nil {
			if v, ok := t.(*engine.Variant); ok {
				v.Target = env.wrap(v.Target)
			} else {
				t = env.wrap(t)
			}
		}
		out, descr = append(out, t), append(descr, d)
	}
	var named []engine.Target
	if len(tf.names) > 0 {
		byName := *tf
		byName.kernels, byName.vm = nil, false
		var err error
		if named, err = byName.targets(); err != nil {
			return nil, nil, err
		}
	} else if tf.file != "" {
		return nil, nil, usagef("--targets names a file but no --target NAME picks from it")
	}
	for _, fl := range tf.order {
		switch fl.name {
		case "kernel":
			t := kernelTarget(tf, fl.value)
			add(t, describeVM(t.Target))
		case "vm":
			if len(tf.kernels) == 0 {
				t := kernelTarget(tf, vmtest.DefaultKernelSpec)
				add(t, describeVM(t.Target))
			}
		case "target":
			for _, t := range named {
				if t.Name() == fl.value {
					add(t, describeVM(t.(*engine.VM).Target))
					break
				}
			}
		case "variant":
			v, err := engine.ParseVariant(fl.value)
			if err != nil {
				return nil, nil, err
			}
			add(&engine.Variant{Target: &engine.Host{Runner: runScenarios}, VariantName: v.Name, Sysctls: v.Sysctls, Dir: v.Dir, Env: v.Env, Root: env.sysctlRoot}, v.Description)
		}
	}
	seen := map[string]bool{}
	for _, t := range out {
		if seen[t.Name()] {
			return nil, nil, usagef("target %s given twice; give variants distinct names", t.Name())
		}
		seen[t.Name()] = true
	}
	return out, descr, nil
}

// kernelTarget is a --kernel 'SPEC [CMDLINE]' target: the command line
// after the spec is appended to --cmdline's, and named in the target's
// name so that one kernel can appear with several.
func kernelTarget(tf *targetFlags, value string) *engine.VM {
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
		t.Target.Name = name
	}
	return t
}

func describeVM(t *vmtest.Target) string {
	d := t.Kernel
	if t.Cmdline != "" {
		d += " " + t.Cmdline
	}
	return d
}
