package main

import (
	"flag"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// targetFlags choose where scenarios run (engine.Targets): the host
// (default), VMs booting the given kernels, or named targets from a
// targets file. Their Order is recorded by the flags' own Set methods.
type targetFlags struct {
	engine.Targets
	fs *flag.FlagSet // where they were registered: which were set
}

// variantKeys says what a --variant's KEY=VALUE pairs set, as
// engine.ParseVariant reads them.
const variantKeys = "each KEY=VALUE a sysctl set during its trials, dir=PATH a directory standing in for " +
	"the scenario file's (a checkout of the same tree), or env.NAME=VALUE a variable added to the exec workload's environment"

// registerVariant adds --variant to fs, recorded in the targets' order.
func (f *targetFlags) registerVariant(fs *flag.FlagSet, usage string) {
	fs.Func("variant", usage, f.use("variant"))
}

// use records a target flag's value of kind (engine.Targets.Use).
func (f *targetFlags) use(kind string) func(string) error {
	return func(s string) error { return f.Use(kind, s) }
}

func (f *targetFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.Func("kernel", "run in a VM booting `SPEC`: a bzImage path, debian:ABI or debian:{6.1,6.12,latest}-{cloud,rt,generic} (repeatable)", f.use("kernel"))
	fs.Func("target", "run on target `NAME` from the targets file (repeatable)", f.use("target"))
	fs.StringVar(&f.File, "targets", "", "targets `FILE` (default: the built-in vmtest/targets.yaml)")
	fs.BoolFunc("vm", "run in a VM booting the default kernel ("+vmtest.DefaultKernelSpec+")", f.use("vm"))
	fs.StringVar(&f.Cmdline, "cmdline", "", "extra guest kernel command line for --kernel/--vm")
	fs.IntVar(&f.VCPUs, "vcpus", 0, "guest vCPUs for --kernel/--vm (default 2 in real time, 1 in virtual time)")
	fs.IntVar(&f.MemMiB, "memory", 1024, "guest memory in `MiB` for --kernel/--vm")
	fs.StringVar(&f.Accel, "accel", "auto", "QEMU accelerator: auto (kvm when /dev/kvm works, else tcg), kvm or tcg")
	fs.IntVar(&f.Jobs, "jobs", 0, "VMs in virtual time that boot at once: a run's trials, a round's targets (default: the CPUs; real-time VMs boot one at a time)")
	fs.StringVar(&f.Clock, "clock", vmtest.ClockAuto, "the VMs' clock: virtual (QEMU counts instructions, 1 ns each: deterministic, TCG only), real, or auto (virtual under TCG, real under KVM)")
	fs.DurationVar(&f.Deadline, "deadline", 0, "kill a VM that has not answered by then (default: from the scenarios' durations)")
	fs.StringVar(&f.Cache, "kernel-cache", "", "kernel cache `DIR` (default: the user cache dir)")
}

// check refuses VM flags that could only fail later, in QEMU or the
// guest, or that no target would use (engine.Targets.CheckSet); each:
// every target must use them, as in a matrix.
func (f *targetFlags) check(each bool) error {
	// 0 is the default, the clock's own count; given, it is no count.
	if f.VCPUs < 1 && len(given(f.fs, "vcpus")) > 0 {
		return engine.Inputf("--vcpus %d: want 1 to %d", f.VCPUs, engine.MaxVCPUs)
	}
	if err := f.Check(); err != nil {
		return err
	}
	return f.CheckSet(given(f.fs, engine.Settings...), each)
}

// targets resolves the flags (engine.Targets.Resolve); none means the
// host alone.
func (f *targetFlags) targets() ([]engine.Target, error) {
	if err := f.check(false); err != nil {
		return nil, err
	}
	f.HostRunner = runScenarios
	return f.Resolve()
}
