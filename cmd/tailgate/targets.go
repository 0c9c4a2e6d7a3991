package main

import (
	"flag"
	"slices"
	"strconv"
	"strings"

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

// vmFlag is --vm: a boolean that also records where it was given.
type vmFlag struct{ f *targetFlags }

func (v vmFlag) String() string {
	if v.f == nil {
		return "false"
	}
	return strconv.FormatBool(v.f.VM)
}

func (v vmFlag) IsBoolFlag() bool { return true }

func (v vmFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	v.f.VM = b
	v.f.Order = slices.DeleteFunc(v.f.Order, func(u engine.TargetUse) bool { return u.Kind == "vm" })
	if b {
		v.f.Order = append(v.f.Order, engine.TargetUse{Kind: "vm"})
	}
	return nil
}

// variantKeys says what a --variant's KEY=VALUE pairs set, as
// engine.ParseVariant reads them.
const variantKeys = "each KEY=VALUE a sysctl set during its trials, dir=PATH a directory standing in for " +
	"the scenario file's (a checkout of the same tree), or env.NAME=VALUE a variable added to the exec workload's environment"

// registerVariant adds --variant to fs, recorded in the targets' order.
func (f *targetFlags) registerVariant(fs *flag.FlagSet, usage string) {
	fs.Func("variant", usage, func(s string) error {
		f.Order = append(f.Order, engine.TargetUse{Kind: "variant", Value: s})
		return nil
	})
}

func (f *targetFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.Func("kernel", "run in a VM booting `SPEC`: a bzImage path, debian:ABI or debian:{6.1,6.12,latest}-{cloud,rt,generic} (repeatable)", func(s string) error {
		f.Kernels = append(f.Kernels, s)
		f.Order = append(f.Order, engine.TargetUse{Kind: "kernel", Value: s})
		return nil
	})
	fs.Func("target", "run on target `NAME` from the targets file (repeatable)", func(s string) error {
		f.Names = append(f.Names, s)
		f.Order = append(f.Order, engine.TargetUse{Kind: "target", Value: s})
		return nil
	})
	fs.StringVar(&f.File, "targets", "", "targets `FILE` (default: the built-in vmtest/targets.yaml)")
	fs.Var(vmFlag{f}, "vm", "run in a VM booting the default kernel ("+vmtest.DefaultKernelSpec+")")
	fs.StringVar(&f.Cmdline, "cmdline", "", "extra guest kernel command line for --kernel/--vm")
	fs.IntVar(&f.VCPUs, "vcpus", 2, "guest vCPUs for --kernel/--vm")
	fs.IntVar(&f.MemMiB, "memory", 1024, "guest memory in `MiB` for --kernel/--vm")
	fs.StringVar(&f.Accel, "accel", "auto", "QEMU accelerator: auto (kvm when /dev/kvm works, else tcg), kvm or tcg")
	fs.DurationVar(&f.Deadline, "deadline", 0, "kill a VM that has not answered by then (default: from the scenarios' durations)")
	fs.StringVar(&f.Cache, "kernel-cache", "", "kernel cache `DIR` (default: the user cache dir)")
}

// check refuses VM flags that could only fail later, in QEMU or the
// guest, or that no target would use.
func (f *targetFlags) check() error {
	if err := f.Check(); err != nil {
		return err
	}
	return f.checkIgnored()
}

// checkIgnored refuses VM flags that no target would use: on the host they
// mean nothing, and a named target takes its settings from the targets
// file. Ignoring them silently would measure something else than asked.
func (f *targetFlags) checkIgnored() error {
	if f.fs == nil || len(f.Kernels) > 0 || f.VM {
		return nil
	}
	var set []string
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "cmdline", "vcpus", "memory", "accel":
			set = append(set, "--"+fl.Name)
		case "deadline", "kernel-cache":
			if len(f.Names) == 0 {
				set = append(set, "--"+fl.Name)
			}
		}
	})
	switch {
	case len(set) == 0:
		return nil
	case len(f.Names) > 0:
		return usagef("%s: --target takes its VM settings from the targets file; set them there, or boot the kernel with --kernel", strings.Join(set, ", "))
	default:
		return usagef("%s: VM settings, and this run is on the host; add --kernel SPEC, --target NAME or --vm, or drop them", strings.Join(set, ", "))
	}
}

// targets resolves the flags (engine.Targets.Resolve); none means the
// host alone.
func (f *targetFlags) targets() ([]engine.Target, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.HostRunner = runScenarios
	return f.Resolve()
}
