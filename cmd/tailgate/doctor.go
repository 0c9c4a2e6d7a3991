package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/tracing"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// check is one line of tailgate doctor.
type check struct {
	name   string
	ok     bool
	detail string
	// need says what the check is needed for; a failed check of a host run
	// need fails doctor, a VM one only warns when VMs are not asked for.
	need string
}

func doctorChecks() []check {
	var cs []check
	add := func(name string, err error, okDetail, need string) {
		c := check{name: name, ok: err == nil, detail: okDetail, need: need}
		if err != nil {
			c.detail = err.Error()
		}
		cs = append(cs, c)
	}

	env := runner.Environment()
	cs = append(cs, check{name: "kernel", ok: true, detail: env.KernelRelease, need: "host runs"})

	add("privileges", tracing.CheckPrivileges(), "may load and attach BPF programs", "host runs")

	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	add("kernel BTF", err, "/sys/kernel/btf/vmlinux present", "host runs")

	if err := tracing.RemoveMemlock(); err != nil {
		add("memlock", err, "", "host runs")
	}
	opts := tracing.TracerOptions{TGID: uint32(os.Getpid())}
	for _, k := range tracers.All {
		name := k.Name + " tracer"
		if t, err := k.New(k.Probe, opts); errors.Is(err, ebpf.ErrNotSupported) {
			// A tracer this kernel cannot load at all (kfunc without
			// fentry or kprobes) fails only the scenarios that use it;
			// runs of every built-in pass over them.
			add(name, err, "", "scenarios using it")
		} else if err != nil {
			add(name, err, "", "host runs")
		} else {
			add(name, nil, "loads and attaches ("+string(t.Variant())+")", "host runs")
			t.Close()
		}
	}

	cs = append(cs, cgroupCheck())

	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		err = errors.New("qemu-system-x86_64 not found; install Debian's qemu-system-x86 (make deps)")
	}
	add("qemu", err, q, "VM runs")

	cs = append(cs, kvmCheck(vmtest.CheckKVM()))

	_, err = exec.LookPath("apt-get")
	if err != nil {
		err = errors.New("apt-get not found: debian: kernel specs cannot be fetched; use a local bzImage path")
	}
	add("apt-get", err, "debian:<abi> kernels can be fetched", "VM runs")
	return cs
}

// kvmCheck words what vmtest found out about KVM.
func kvmCheck(k vmtest.KVM) check {
	c := check{name: "kvm", ok: k.Usable, need: "fast VM runs"}
	found := fmt.Sprintf("probed in %v", k.Took.Round(time.Millisecond))
	if k.Cached {
		found = "found earlier this boot, in " + k.CacheFile
	}
	switch {
	case k.Usable:
		c.detail = fmt.Sprintf("a test guest runs under KVM (%s): VMs run with -accel kvm", found)
	case k.Opens:
		c.detail = fmt.Sprintf("/dev/kvm opens but a guest does not run (%s; %s); VMs use TCG (emulated timings)", k.Reason, found)
	default:
		c.detail = k.Reason + ": VMs use TCG (emulated timings)"
	}
	return c
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor")
	setUsage(fs, stdout, "usage: tailgate doctor\n\n"+
		"Checks what runs need on this machine: privileges, BTF, each tracer, qemu and kvm.\n"+
		"exit 0 when host runs will work here, 3 when a check they need fails.\n")
	if _, err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	cs := doctorChecks()
	t := report.NewTable(stdout)
	t.Header([]string{"check", "status", "needed for", "detail"})
	failed := 0
	for _, c := range cs {
		status := "ok"
		if !c.ok {
			status = "FAIL"
			if c.need == "host runs" {
				failed++
			} else {
				status = "warn"
			}
		}
		if err := t.Append([]string{c.name, status, c.need, c.detail}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if failed > 0 {
		return infra(fmt.Errorf("%d checks failed: host runs will not work here", failed))
	}
	return nil
}

// cgroupCheck makes and removes a cgroup v2 group, as each trial of an exec
// workload does; run --cgroup needs the hierarchy too.
func cgroupCheck() check {
	c := check{name: "cgroup v2", need: "exec, --cgroup"}
	mount, err := cgroup.Mount()
	if err != nil {
		c.detail = err.Error()
		return c
	}
	g, err := cgroup.New()
	if err != nil {
		c.detail = fmt.Sprintf("mounted at %s, but a group cannot be made: %v", mount, err)
		return c
	}
	if err := g.Remove(); err != nil {
		c.detail = fmt.Sprintf("mounted at %s; a group was made but not removed: %v", mount, err)
		return c
	}
	c.ok, c.detail = true, "groups can be made and removed under "+mount
	return c
}
