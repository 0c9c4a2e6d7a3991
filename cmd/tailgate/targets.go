package main

import (
	"flag"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/engine"
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

// variantKeys says what a --variant's KEY=VALUE pairs set, as
// engine.ParseVariant reads them.
const variantKeys = "each KEY=VALUE a sysctl set during its trials, dir=PATH a directory standing in for " +
	"the scenario file's (a checkout of the same tree), or env.NAME=VALUE a variable added to the exec workload's environment"

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
func (f *targetFlags) targets() ([]engine.Target, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	var out []engine.Target
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
				return nil, &usageError{Err: err}
			}
		}
		for _, n := range f.names {
			t, err := ts.Find(n)
			if err != nil {
				return nil, &usageError{Err: err}
			}
			if f.deadline > 0 {
				t.Deadline = f.deadline
			}
			out = append(out, f.vmTarget(&t))
		}
	} else if f.file != "" {
		return nil, usagef("--targets names a file but no --target NAME picks from it")
	}
	seen := map[string]bool{}
	for _, t := range out {
		if seen[t.Name()] {
			return nil, usagef("target %s given twice", t.Name())
		}
		seen[t.Name()] = true
	}
	if len(out) == 0 {
		return []engine.Target{&engine.Host{Runner: runScenarios}}, nil
	}
	return out, nil
}

// vmTarget is the engine's target booting t, with the flags' kernel cache.
func (f *targetFlags) vmTarget(t *vmtest.Target) *engine.VM {
	return &engine.VM{Target: t, CacheDir: f.cache}
}

// adhoc is the target of a --kernel flag, named after the kernel.
func (f *targetFlags) adhoc(spec string) *engine.VM {
	name := strings.TrimPrefix(spec, "debian:")
	if !strings.HasPrefix(spec, "debian:") {
		name = filepath.Base(spec)
	}
	if f.cmdline != "" {
		name += "+" + strings.ReplaceAll(strings.Fields(f.cmdline)[0], "=", "-")
	}
	return f.vmTarget(&vmtest.Target{
		Name: name, Kernel: spec, VCPUs: f.vcpus, MemMiB: f.memMiB,
		Cmdline: f.cmdline, Accel: f.accel, Deadline: f.deadline,
	})
}

// outputPath is where the Result of target t goes when -o names path: the
// path itself for a single target, else path with the target's name
// before the extension.
func outputPath(path string, t engine.Target, n int) string {
	if n <= 1 || path == "" {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + t.Name() + ext
}
