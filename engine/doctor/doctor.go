// Package doctor checks what runs need on this machine: privileges, BTF,
// each tracer, cgroup v2, qemu and kvm. It is what tailgate doctor prints.
package doctor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/vm"
)

// NeedHost is the Need of a check host runs cannot do without: only such a
// check fails doctor; the others warn.
const NeedHost = "host runs"

// Check is one line of tailgate doctor.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Need says what the check is needed for; a failed check of NeedHost
	// fails doctor, any other only warns (VMs may not be asked for).
	Need string `json:"need"`
}

// Status words the check's outcome: ok; FAIL when host runs need it;
// else warn.
func (c Check) Status() string {
	switch {
	case c.OK:
		return "ok"
	case c.Need == NeedHost:
		return "FAIL"
	}
	return "warn"
}

// Checks runs every check, in the order tailgate doctor lists them.
func Checks() []Check {
	var cs []Check
	add := func(name string, err error, okDetail, need string) {
		c := Check{Name: name, OK: err == nil, Detail: okDetail, Need: need}
		if err != nil {
			c.Detail = err.Error()
		}
		cs = append(cs, c)
	}

	env := runner.Environment()
	cs = append(cs, Check{Name: "kernel", OK: true, Detail: env.KernelRelease, Need: NeedHost})

	privErr := tracing.CheckPrivileges()
	if privErr != nil {
		// Without them every load fails alike: one line says so, not
		// one per tracer.
		privErr = fmt.Errorf("%w; the tracers were not loaded", privErr)
	}
	add("privileges", privErr, "may load and attach BPF programs", NeedHost)

	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	add("kernel BTF", err, "/sys/kernel/btf/vmlinux present", NeedHost)

	if privErr == nil {
		if err := tracing.RemoveMemlock(); err != nil {
			add("memlock", err, "", NeedHost)
		}
		cs = append(cs, Tracers()...)
	}

	cs = append(cs, Cgroup())
	cs = append(cs, Sysctls(sysctl.Root))

	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		err = errors.New("qemu-system-x86_64 not found; install Debian's qemu-system-x86 (make deps)")
	}
	add("qemu", err, q, "VM runs")
	if exe, err := os.Executable(); err != nil {
		add("guest init", err, "", "VM runs")
	} else {
		cs = append(cs, GuestInit(exe))
	}

	kvm := vm.CheckKVM()
	cs = append(cs, KVM(kvm))
	version := ""
	if err == nil {
		version, err = vm.QEMUVersion(q)
	}
	cs = append(cs, Clocks(version, err, kvm))

	_, err = exec.LookPath("apt-get")
	if err != nil {
		err = errors.New("apt-get not found: debian: kernel specs cannot be fetched; use a local bzImage path")
	}
	add("apt-get", err, "debian:<abi> kernels can be fetched", "VM runs")
	return cs
}

// GuestInit says whether exe can be a VM's /init: static, or linked
// against the C library whose loader and libraries the initramfs then
// carries (vm.GuestFiles).
func GuestInit(exe string) Check {
	c := Check{Name: "guest init", Need: "VM runs"}
	files, err := vm.GuestFiles(exe)
	switch {
	case err != nil:
		c.Detail = err.Error()
	case len(files) == 0:
		c.OK, c.Detail = true, exe+" is static: it is the guest's /init"
	default:
		c.OK, c.Detail = true, fmt.Sprintf("%s is dynamically linked: the guest gets it with %s (make build makes a static one)", exe, strings.Join(files, ", "))
	}
	return c
}

// KVM words what vm found out about KVM.
func KVM(k vm.KVM) Check {
	c := Check{Name: "kvm", OK: k.Usable, Need: "fast VM runs"}
	found := fmt.Sprintf("probed in %v", k.Took.Round(time.Millisecond))
	if k.Cached {
		found = "found earlier this boot, in " + k.CacheFile
	}
	switch {
	case k.Usable:
		c.Detail = fmt.Sprintf("a test guest runs under KVM (%s): VMs run with -accel kvm", found)
	case k.Opens:
		c.Detail = fmt.Sprintf("/dev/kvm opens but a guest does not run (%s; %s); VMs use TCG", k.Reason, found)
	default:
		c.Detail = k.Reason + ": VMs use TCG"
	}
	return c
}

// Clocks says which clocks a VM can run on here (vm.Clocks), and
// which --clock auto picks: virtual time wants QEMU, real time is KVM's
// when it runs a guest and emulated otherwise. qemuErr says why there is
// no QEMU, version is its version.
func Clocks(version string, qemuErr error, k vm.KVM) Check {
	c := Check{Name: "clocks", OK: qemuErr == nil, Need: "VM runs"}
	if qemuErr != nil {
		c.Detail = fmt.Sprintf("none: %v", qemuErr)
		return c
	}
	virtual := fmt.Sprintf("virtual (QEMU %s under TCG, %d ns an instruction: deterministic, blind to hardware costs)", version, 1<<vm.IcountShift)
	if k.Usable {
		c.Detail = virtual + "; real (KVM, the default: the hardware's timings)"
	} else {
		c.Detail = virtual + ", the default here; real (TCG: emulated, the host's load in every timing)"
	}
	return c
}

// Cgroup makes and removes a cgroup v2 group, as each trial of an exec
// workload does; run --cgroup needs the hierarchy too.
func Cgroup() Check {
	c := Check{Name: "cgroup v2", Need: "exec, --cgroup"}
	mount, err := cgroup.Mount()
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	g, err := cgroup.New()
	if err != nil {
		c.Detail = fmt.Sprintf("mounted at %s, but a group cannot be made: %v", mount, err)
		return c
	}
	if err := g.Remove(); err != nil {
		c.Detail = fmt.Sprintf("mounted at %s; a group was made but not removed: %v", mount, err)
		return c
	}
	c.OK, c.Detail = true, "groups can be made and removed under "+mount
	return c
}

// Sysctls puts back what tailgate runs that died (SIGKILL) left changed
// under root, from their journals, as every command that runs trials does
// first, and says what it restored; a journal that could not be replayed
// is set aside and named, with what to restore by hand.
func Sysctls(root string) Check {
	c := Check{Name: "sysctls", Need: "variants"}
	rec, err := sysctl.Recover(root)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	var restored, left []string
	for _, r := range rec.Restored {
		restored = append(restored, fmt.Sprintf("%s (left changed by pid %d)", r.Setting, r.PID))
	}
	for _, sa := range rec.SetAside {
		left = append(left, sa.Error())
	}
	for _, p := range sysctl.SetAsideJournals(root) {
		if !slices.ContainsFunc(rec.SetAside, func(sa sysctl.SetAside) bool { return sa.Journal == p }) {
			left = append(left, "a journal set aside earlier, "+p+", names values a run that died could not have put back; restore them by hand and remove it")
		}
	}
	switch {
	case len(left) > 0:
		c.Detail = strings.Join(left, "; ")
	case len(restored) > 0:
		c.OK, c.Detail = true, "restored "+strings.Join(restored, ", ")
	default:
		c.OK, c.Detail = true, "none left changed by a tailgate run that died"
	}
	return c
}

// Options controls the layout of Render.
type Options struct {
	// Width is the columns the table keeps to (termwidth); 0 is
	// unlimited.
	Width int
}

// Write lays the checks out as a table within the width of w
// (termwidth.Of) and returns how many of those host runs need failed.
func Write(w io.Writer, cs []Check) (failed int, err error) {
	return Render(w, cs, Options{Width: termwidth.Of(w)})
}

// Render lays the checks out as a table and returns how many of those
// host runs need failed. Narrower than the table, the detail wraps and
// then, with what the check is needed for, moves beneath the row.
func Render(w io.Writer, cs []Check, o Options) (failed int, err error) {
	t := &render.FitTable{Width: o.Width, Columns: []render.Column{
		{Header: "check"},
		{Header: "status"},
		{Header: "needed for", Fold: 1},
		{Header: "detail", Fold: 2, Wrap: 24},
	}}
	for _, c := range cs {
		if c.Status() == "FAIL" {
			failed++
		}
		t.Append([]string{c.Name, c.Status(), c.Need, c.Detail})
	}
	return failed, t.Render(w)
}
