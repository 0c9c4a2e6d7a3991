package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// targetFlags choose where scenarios run: the host (default), VMs booting
// the given kernels, or named targets from a targets file.
type targetFlags struct {
	kernels  []string
	names    []string
	file     string
	vm       bool
	cmdline  string
	vcpus    int
	memMiB   int
	accel    string
	deadline time.Duration
	cache    string
	fs       *flag.FlagSet // where they were registered: which were set
	// order is every target flag (--kernel, --target, --vm, --variant)
	// in command-line order, as the flags' own Set methods saw them: the
	// first is the base of a gate, the reference of a matrix.
	order []flagUse
}

// flagUse is one target flag as given: its name and value.
type flagUse struct{ name, value string }

// vmFlag is --vm: a boolean that also records where it was given.
type vmFlag struct{ f *targetFlags }

func (v vmFlag) String() string {
	if v.f == nil {
		return "false"
	}
	return strconv.FormatBool(v.f.vm)
}

func (v vmFlag) IsBoolFlag() bool { return true }

func (v vmFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	v.f.vm = b
	v.f.order = slices.DeleteFunc(v.f.order, func(u flagUse) bool { return u.name == "vm" })
	if b {
		v.f.order = append(v.f.order, flagUse{name: "vm"})
	}
	return nil
}

// registerVariant adds --variant to fs, recorded in the targets' order.
func (f *targetFlags) registerVariant(fs *flag.FlagSet, usage string) {
	fs.Func("variant", usage, func(s string) error {
		f.order = append(f.order, flagUse{"variant", s})
		return nil
	})
}

func (f *targetFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.Func("kernel", "run in a VM booting `SPEC`: a bzImage path, debian:ABI or debian:{6.1,6.12,latest}-{cloud,rt,generic} (repeatable)", func(s string) error {
		f.kernels = append(f.kernels, s)
		f.order = append(f.order, flagUse{"kernel", s})
		return nil
	})
	fs.Func("target", "run on target `NAME` from the targets file (repeatable)", func(s string) error {
		f.names = append(f.names, s)
		f.order = append(f.order, flagUse{"target", s})
		return nil
	})
	fs.StringVar(&f.file, "targets", "", "targets `FILE` (default: the built-in vmtest/targets.yaml)")
	fs.Var(vmFlag{f}, "vm", "run in a VM booting the default kernel ("+vmtest.DefaultKernelSpec+")")
	fs.StringVar(&f.cmdline, "cmdline", "", "extra guest kernel command line for --kernel/--vm")
	fs.IntVar(&f.vcpus, "vcpus", 2, "guest vCPUs for --kernel/--vm")
	fs.IntVar(&f.memMiB, "memory", 1024, "guest memory in `MiB` for --kernel/--vm")
	fs.StringVar(&f.accel, "accel", "auto", "QEMU accelerator: auto (kvm when /dev/kvm works, else tcg), kvm or tcg")
	fs.DurationVar(&f.deadline, "deadline", 0, "kill a VM that has not answered by then (default: from the scenarios' durations)")
	fs.StringVar(&f.cache, "kernel-cache", "", "kernel cache `DIR` (default: the user cache dir)")
}

// execTarget is one place to run: the host (vm nil) or a VM target.
type execTarget struct {
	name string
	vm   *vmtest.Target
}

// Limits of the VM flags: a guest needs this much memory to boot a Debian
// kernel with tailgate as its init, and QEMU's TCG takes at most this many
// vCPUs here.
const (
	minGuestMiB = 256
	maxGuestMiB = 64 * 1024
	maxVCPUs    = 64
)

// check refuses VM flags that could only fail later, in QEMU or the guest.
func (f *targetFlags) check() error {
	switch f.accel {
	case "auto", "kvm", "tcg":
	default:
		return usagef("--accel %q: want auto, kvm or tcg", f.accel)
	}
	if f.vcpus < 1 || f.vcpus > maxVCPUs {
		return usagef("--vcpus %d: want 1 to %d", f.vcpus, maxVCPUs)
	}
	if f.memMiB < minGuestMiB || f.memMiB > maxGuestMiB {
		return usagef("--memory %d: want %d to %d MiB (a guest needs at least %d MiB to boot)", f.memMiB, minGuestMiB, maxGuestMiB, minGuestMiB)
	}
	if f.deadline < 0 {
		return usagef("--deadline %s: want a positive duration", f.deadline)
	}
	return f.checkIgnored()
}

// checkIgnored refuses VM flags that no target would use: on the host they
// mean nothing, and a named target takes its settings from the targets
// file. Ignoring them silently would measure something else than asked.
func (f *targetFlags) checkIgnored() error {
	if f.fs == nil || len(f.kernels) > 0 || f.vm {
		return nil
	}
	var set []string
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "cmdline", "vcpus", "memory", "accel":
			set = append(set, "--"+fl.Name)
		case "deadline", "kernel-cache":
			if len(f.names) == 0 {
				set = append(set, "--"+fl.Name)
			}
		}
	})
	switch {
	case len(set) == 0:
		return nil
	case len(f.names) > 0:
		return usagef("%s: --target takes its VM settings from the targets file; set them there, or boot the kernel with --kernel", strings.Join(set, ", "))
	default:
		return usagef("%s: VM settings, and this run is on the host; add --kernel SPEC, --target NAME or --vm, or drop them", strings.Join(set, ", "))
	}
}

// targets resolves the flags; no VM flag means the host alone.
func (f *targetFlags) targets() ([]execTarget, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	var out []execTarget
	for _, k := range f.kernels {
		out = append(out, f.adhoc(k))
	}
	if f.vm && len(f.kernels) == 0 {
		out = append(out, f.adhoc(vmtest.DefaultKernelSpec))
	}
	if len(f.names) > 0 {
		ts := vmtest.DefaultTargets()
		if f.file != "" {
			var err error
			if ts, err = vmtest.LoadTargets(f.file); err != nil {
				return nil, &usageError{err}
			}
		}
		for _, n := range f.names {
			t, err := ts.Find(n)
			if err != nil {
				return nil, &usageError{err}
			}
			if f.deadline > 0 {
				t.Deadline = f.deadline
			}
			out = append(out, execTarget{name: t.Name, vm: &t})
		}
	} else if f.file != "" {
		return nil, usagef("--targets names a file but no --target NAME picks from it")
	}
	seen := map[string]bool{}
	for _, t := range out {
		if seen[t.name] {
			return nil, usagef("target %s given twice", t.name)
		}
		seen[t.name] = true
	}
	if len(out) == 0 {
		return []execTarget{{name: hostTarget}}, nil
	}
	return out, nil
}

// adhoc is the target of a --kernel flag, named after the kernel.
func (f *targetFlags) adhoc(spec string) execTarget {
	name := strings.TrimPrefix(spec, "debian:")
	if !strings.HasPrefix(spec, "debian:") {
		name = filepath.Base(spec)
	}
	if f.cmdline != "" {
		name += "+" + strings.ReplaceAll(strings.Fields(f.cmdline)[0], "=", "-")
	}
	return execTarget{name: name, vm: &vmtest.Target{
		Name: name, Kernel: spec, VCPUs: f.vcpus, MemMiB: f.memMiB,
		Cmdline: f.cmdline, Accel: f.accel, Deadline: f.deadline,
	}}
}

// deadline is how long a VM may take for req: the scenarios' own time,
// doubled for emulation, plus room for boot and attach.
func deadline(req runner.Request) time.Duration {
	var d time.Duration
	for _, s := range req.Scenarios {
		r := req.Resolve(s)
		d += r.Warmup + time.Duration(r.Trials)*r.Duration
	}
	return 2*d + 90*time.Second
}

// execute runs req on t. Host runs go straight to the runner, which runs
// each trial in a worker process of its own; a VM run boots once per trial,
// so that VM trials are as independent as host ones: each is a fresh
// kernel, with its own boot-time layout, caches and timer calibration.
// Finished trials are kept when a later boot fails or is interrupted: the
// Result returned beside the error holds them, marked partial.
func execute(ctx context.Context, t execTarget, f *targetFlags, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	if t.vm == nil {
		for _, sc := range req.Scenarios {
			if err := scenarios.CheckAllowedCPUs(sc.Workload.CPUs); err != nil {
				return nil, usagef("scenario %s: %v", sc.Name, err)
			}
		}
		return runScenarios(ctx, req)
	}
	vcpus := cmp.Or(t.vm.VCPUs, vmtest.DefaultVCPUs)
	for _, sc := range req.Scenarios {
		if why := sc.HostOnly(); why != "" {
			return nil, usagef("scenario %s cannot run in a VM (%s): run it on the host, without --kernel", sc.Name, why)
		}
		if c := sc.Workload.CPUs; len(c) > 0 && c[len(c)-1] >= vcpus {
			return nil, usagef("scenario %s: workload cpus names CPU %d, but the VM has %d vCPUs (0-%d): give the VM more with --vcpus, or list its CPUs", sc.Name, c[len(c)-1], vcpus, vcpus-1)
		}
	}
	var cache *vmtest.KernelCache
	var err error
	if f.cache != "" {
		cache = &vmtest.KernelCache{Dir: f.cache}
	} else if cache, err = vmtest.DefaultKernelCache(); err != nil {
		return nil, infra(err)
	}
	cache.Progress = func(s string) { p.Line(t.name + ": " + s) }
	k, err := cache.Resolve(ctx, t.vm.Kernel)
	if errors.Is(err, vmtest.ErrUnknownKernel) {
		return nil, &usageError{err}
	}
	if err != nil {
		return nil, infra(err)
	}
	if req.Duration == 0 {
		req.Scenarios = lengthenVMTrials(req.Scenarios)
	}
	types, dropTypes := kernelTypesFor(k, func(s string) { p.Line(t.name + ": " + s) })
	defer dropTypes()
	trials := 0
	for _, s := range req.Scenarios {
		trials = max(trials, req.Resolve(s).Trials)
	}
	var done []result.Input
	merged := func(runErr error) (*result.Result, error) {
		if len(done) == 0 {
			return nil, runErr
		}
		res, err := result.Merge(done)
		if err != nil {
			return nil, errors.Join(runErr, infra(err))
		}
		res = fixTrials(res)
		if runErr != nil {
			res.Partial, res.Error = true, runErr.Error()
		}
		return res, runErr
	}
	for trial := 1; trial <= trials; trial++ {
		boot := req
		boot.Scenarios = nil
		for _, s := range req.Scenarios {
			if r := req.Resolve(s); r.Trials >= trial {
				one := *r
				one.Trials = 1
				boot.Scenarios = append(boot.Scenarios, &one)
			}
		}
		boot.Trials = 1
		if trials > 1 {
			p.Line(fmt.Sprintf("%s: boot %d/%d", t.name, trial, trials))
		}
		res, err := bootOnce(ctx, t, k, types, boot, p)
		if err != nil {
			return merged(err)
		}
		done = append(done, result.Input{Path: fmt.Sprintf("%s boot %d", t.name, trial), Result: res})
	}
	return merged(nil)
}

// vmMinTrial is the shortest trial a VM target runs unless --duration
// says otherwise. Each trial is a boot of its own (4-6 s under TCG here),
// so a longer trial costs a round little, and the tail of a short one
// varies between boots with the emulation: measured here, gates of
// syscall-read on debian 6.1 with pti=on against the same kernel (p50
// 1.8×, p99 1.9×) decided the regression in 2 of 5 runs within the default
// budget with the scenario's 500 ms trials (p99 intervals like [0.74,
// 5.35] after 19 boots a side), and in 5 of 5 with 2 s trials, 4 of them
// at the first look (6 rounds).
const vmMinTrial = 2 * time.Second

// lengthenVMTrials returns the scenarios with trials of at least
// vmMinTrial, copied where changed.
func lengthenVMTrials(ss []*scenarios.Scenario) []*scenarios.Scenario {
	out := make([]*scenarios.Scenario, len(ss))
	for i, s := range ss {
		out[i] = s
		if s.Duration < vmMinTrial {
			c := *s
			c.Duration = vmMinTrial
			out[i] = &c
		}
	}
	return out
}

// bootOnce boots t's kernel once and runs req in the guest, whose tracers
// relocate against kernelTypes when set (kernelTypesFor).
func bootOnce(ctx context.Context, t execTarget, k *vmtest.Kernel, kernelTypes string, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	vm := t.vm.VM(k)
	vm.KernelTypes = kernelTypes
	if vm.Deadline == 0 {
		vm.Deadline = deadline(req)
	}
	gr := vmtest.GuestRequest{SkipUnsupported: req.SkipUnsupported}
	for _, s := range req.Scenarios {
		// One scratch disk, as large as the largest scenario needs.
		vm.ScratchDisk = max(vm.ScratchDisk, scenarios.ScratchSize(s.Workload))
		b, err := json.Marshal(req.Resolve(s))
		if err != nil {
			return nil, err
		}
		gr.Scenarios = append(gr.Scenarios, b)
	}
	res, err := vmtest.Run(ctx, vm, gr, func(s string) { p.Line(t.name + ": " + s) })
	if res != nil {
		res.Target.Name = t.name
	}
	if err != nil {
		return nil, infra(err)
	}
	return res, nil
}

// guestRun is what tailgate does as PID 1 of a VM: the host's request, with
// the same runner as a host run.
func guestRun(ctx context.Context, gr vmtest.GuestRequest, line func(string)) (*result.Result, error) {
	req := runner.Request{
		Trials: gr.Trials, Duration: gr.Duration, Warmup: gr.Warmup, WarmupSet: gr.WarmupSet,
		Target: gr.Target, SkipUnsupported: gr.SkipUnsupported, KernelText: gr.KernelText,
		// A boot is as fresh as a worker process: the guest runs its
		// trials itself.
		InProcess: true,
	}
	if gr.KernelTypes != "" {
		// Without them the tracers relocate against the kernel's own BTF,
		// only slower.
		raw, err := os.ReadFile(gr.KernelTypes)
		if err == nil {
			req.KernelTypes, err = kerneltypes.Load(raw)
		}
		if err != nil {
			line(fmt.Sprintf("the host's cut of the kernel's BTF is unusable (%v); decoding the kernel's own", err))
		}
	}
	for i, raw := range gr.Scenarios {
		var s scenarios.Scenario
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("scenario %d of the request: %w", i, err)
		}
		req.Scenarios = append(req.Scenarios, &s)
	}
	req.Progress = func(e runner.Event) {
		switch {
		case e.Phase == "trial" && e.Detail != "":
			line(fmt.Sprintf("%s: trial %d/%d done: %s", e.Scenario, e.Trial, e.Trials, e.Detail))
		case e.Phase == "attach" || e.Phase == "warmup":
			line(fmt.Sprintf("%s: %s", e.Scenario, e.Phase))
		case e.Phase == "skipped":
			line(fmt.Sprintf("%s: skipped: %s", e.Scenario, e.Detail))
		}
	}
	return runner.Run(ctx, req)
}

// outputPath is where the Result of target t goes when -o names path: the
// path itself for a single target, else path with the target's name
// before the extension.
func outputPath(path string, t execTarget, n int) string {
	if n <= 1 || path == "" {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + t.name + ext
}
