package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// vmSettings are the flags' defaults: what Check passes.
func vmSettings() TargetChoice {
	return TargetChoice{Settings: vm.Settings{VCPUs: 2, MemMiB: 1024, Accel: "auto"}}
}

func names(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// Resolve gives VMs for kernels first, then named targets; the host
// alone when none is given, with the host runner it was handed.
func TestTargetChoiceResolve(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*TargetChoice)
		want []string
	}{
		{"none is the host", func(*TargetChoice) {}, []string{HostName}},
		{"kernels named after their spec and command line", func(ts *TargetChoice) {
			ts.Kernels = []string{"debian:6.1-cloud", "/boot/bzImage"}
			ts.Cmdline = "nohz_full=1 quiet"
		}, []string{"6.1-cloud+nohz_full-1", "bzImage+nohz_full-1"}},
		{"vm is the default kernel", func(ts *TargetChoice) { ts.VM = true }, []string{kernelName(kernels.DefaultSpec)}},
		{"vm beside a kernel adds none", func(ts *TargetChoice) { ts.VM, ts.Kernels = true, []string{"debian:6.12-rt"} }, []string{"6.12-rt"}},
		{"kernels then named targets", func(ts *TargetChoice) {
			ts.Use("target", "debian-6.1-rt")
			ts.Use("kernel", "debian:6.12-cloud")
		}, []string{"6.12-cloud", "debian-6.1-rt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := vmSettings()
			c.edit(&ts)
			got, err := ts.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, names(got)); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}

	ts := vmSettings()
	ts.Kernels, ts.Cmdline, ts.VCPUs, ts.MemMiB, ts.Deadline = []string{"debian:6.1-cloud"}, "quiet", 4, 2048, time.Minute
	got, _ := ts.Resolve()
	booted := got[0].(*VM).Target
	if booted.Kernel != "debian:6.1-cloud" || booted.Cmdline != "quiet" || booted.VCPUs != 4 || booted.MemMiB != 2048 || booted.Deadline != time.Minute {
		t.Errorf("a --kernel VM boots %+v, not with the settings given", booted)
	}
}

// What Resolve refuses is the input's: two targets of one name (their
// Results would overwrite each other), a targets file nothing picks from,
// a name the file lacks.
func TestTargetChoiceResolveRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*TargetChoice)
		want string
	}{
		{"twice", func(ts *TargetChoice) { ts.Kernels = []string{"debian:6.1-cloud", "debian:6.1-cloud"} }, "given twice"},
		{"file without names", func(ts *TargetChoice) { ts.File = "targets.yaml" }, "no --target NAME picks from it"},
		{"unknown name", func(ts *TargetChoice) { ts.Names = []string{"no-such-target"} }, "no-such-target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := vmSettings()
			c.edit(&ts)
			_, err := ts.Resolve()
			if !errors.As(err, new(*InputError)) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want an InputError saying %q", err, c.want)
			}
		})
	}
}

// InOrder keeps the order the targets were given, describes each, wraps
// each host or VM (inside a variant), and refuses two of one name.
func TestTargetChoiceInOrder(t *testing.T) {
	ts := vmSettings()
	for _, u := range []TargetUse{{"variant", "base"}, {"kernel", "debian:6.1-cloud nohz_full=1"}, {"vm", "true"}, {"variant", "tuned:vm.swappiness=10"}} {
		if err := ts.Use(u.Kind, u.Value); err != nil {
			t.Fatal(err)
		}
	}
	var wrapped []string
	wrap := func(t Target) Target {
		wrapped = append(wrapped, t.Name())
		return t
	}
	got, descr, err := ts.InOrder("/proc/sys", wrap)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"base", "6.1-cloud+nohz_full-1", "tuned"}, names(got)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"host", "debian:6.1-cloud nohz_full=1", "host, vm.swappiness=10"}, descr); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{HostName, "6.1-cloud+nohz_full-1", HostName}, wrapped); diff != "" {
		t.Errorf("wrapped (-want +got):\n%s", diff)
	}
	if v, ok := got[2].(*Variant); !ok || v.Root != "/proc/sys" || v.Sysctls[0].Key != "vm.swappiness" {
		t.Errorf("third target %#v, want the variant tuned setting vm.swappiness under /proc/sys", got[2])
	}

	twice := vmSettings()
	twice.Use("variant", "a")
	twice.Use("variant", "a:vm.swappiness=10")
	if _, _, err := twice.InOrder("/proc/sys", nil); err == nil || !strings.Contains(err.Error(), "give variants distinct names") {
		t.Errorf("two variants named a: %v", err)
	}
	bad := vmSettings()
	bad.Accel = "frob"
	if _, _, err := bad.InOrder("/proc/sys", nil); !errors.As(err, new(*InputError)) {
		t.Errorf("--accel frob: %v, want an InputError", err)
	}
}

// A --kernel NAME=SPEC is named NAME: one kernel can be gated against
// itself, and two builds of one path against each other; a spec or a
// command line word with '=' is not taken for a name.
func TestKernelNamed(t *testing.T) {
	ts := vmSettings()
	for _, v := range []string{"base=debian:6.1-cloud", "head=debian:6.1-cloud audit=1", "/b/vmlinux", "debian:6.12-cloud a=b", "./x=y/bzImage"} {
		ts.Use("kernel", v)
	}
	got, _, err := ts.InOrder("/proc/sys", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"base", "head", "vmlinux", "6.12-cloud+a-b", "bzImage"}, names(got)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	var specs []string
	for _, g := range got {
		vt := g.(*VM).Target
		specs = append(specs, vt.Kernel+"|"+vt.Cmdline)
	}
	want := []string{"debian:6.1-cloud|", "debian:6.1-cloud|audit=1", "/b/vmlinux|", "debian:6.12-cloud|a=b", "./x=y/bzImage|"}
	if diff := cmp.Diff(want, specs); diff != "" {
		t.Errorf("kernels booted (-want +got):\n%s", diff)
	}
	// A long command line names the VM within a Result's limit, and two
	// that differ past it stay two.
	long := vmSettings()
	line := "panic=10 printk.time=1 reboot=t pcie_aspm=off log_buf_len=1M no_hash_pointers audit="
	long.Use("kernel", "debian:6.12-cloud "+line+"0")
	long.Use("kernel", "debian:6.12-cloud "+line+"1")
	lt, _, err := long.InOrder("/proc/sys", nil)
	if err != nil {
		t.Fatalf("two long command lines: %v", err)
	}
	for _, g := range lt {
		if n := g.Name(); len(n) > result.MaxNameLen || !strings.HasPrefix(n, "6.12-cloud+panic-10+printk.time-1") {
			t.Errorf("name %q (%d bytes): want the kernel's start within %d", n, len(n), result.MaxNameLen)
		}
	}
	// Unnamed, two builds of one path collide, as one kernel given twice does.
	two := vmSettings()
	two.Use("kernel", "/a/bzImage")
	two.Use("kernel", "/b/bzImage")
	if _, _, err := two.InOrder("/proc/sys", nil); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("two bzImages unnamed: %v, want refused", err)
	}
}

// Check refuses the clocks no VM can have: virtual time under KVM or
// with more than one vCPU, a clock of another name.
func TestTargetsCheckClock(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*TargetChoice)
		want string
	}{
		{"auto", func(ts *TargetChoice) { ts.Clock = vm.ClockAuto }, ""},
		{"virtual", func(ts *TargetChoice) { ts.Clock, ts.VCPUs = vm.ClockVirtual, 0 }, ""},
		{"real with 4 vCPUs", func(ts *TargetChoice) { ts.Clock, ts.VCPUs = vm.ClockReal, 4 }, ""},
		{"unknown", func(ts *TargetChoice) { ts.Clock = "wall" }, `--clock "wall": want auto, virtual, real`},
		{"virtual under kvm", func(ts *TargetChoice) { ts.Clock, ts.VCPUs, ts.Accel = vm.ClockVirtual, 0, "kvm" }, "--clock virtual with accel kvm"},
		{"virtual, 2 vCPUs", func(ts *TargetChoice) { ts.Clock = vm.ClockVirtual }, "--vcpus 2 in virtual time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := vmSettings()
			c.edit(&ts)
			err := ts.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (!errors.As(err, new(*InputError)) || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("err %v, want an InputError starting %q", err, c.want)
			}
		})
	}
}

// One comparison takes one clock: a VM in virtual time beside the host
// is refused before anything runs; VMs of one clock, or the host beside
// a VM in real time, pass. A VM whose clock cannot be is bad input.
func TestCheckClocks(t *testing.T) {
	newVM := func(name, clock string, vcpus int) Target {
		return &VM{Target: &vm.Target{Name: name, Kernel: "debian:6.1-cloud", Settings: vm.Settings{Accel: "tcg", Clock: clock, VCPUs: vcpus}}}
	}
	host := &Variant{Target: &Host{}, VariantName: "base"}
	for _, c := range []struct {
		name    string
		targets []Target
		want    string
	}{
		{"virtual VMs", []Target{newVM("a", vm.ClockAuto, 0), newVM("b", vm.ClockVirtual, 0)}, ""},
		{"real VM beside the host", []Target{host, newVM("b", vm.ClockReal, 2)}, ""},
		{"virtual VM beside the host", []Target{host, newVM("b", vm.ClockAuto, 0)}, "target base runs in real time and b in virtual time"},
		{"virtual beside real", []Target{newVM("a", vm.ClockVirtual, 0), newVM("b", vm.ClockReal, 0)}, "target a runs in virtual time and b in real time"},
		{"2 vCPUs in virtual time", []Target{newVM("a", vm.ClockAuto, 2)}, "target a: vcpus 2 in virtual time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckClocks(c.targets)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (!errors.As(err, new(*InputError)) || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("err %v, want an InputError starting %q", err, c.want)
			}
		})
	}
}

// Use records each target in Order; --vm once however often given, and
// false takes it back.
func TestTargetChoiceUse(t *testing.T) {
	var ts TargetChoice
	for _, u := range [][2]string{{"vm", "true"}, {"kernel", "K"}, {"vm", "true"}, {"target", "T"}, {"variant", "v"}} {
		if err := ts.Use(u[0], u[1]); err != nil {
			t.Fatal(err)
		}
	}
	want := []TargetUse{{"kernel", "K"}, {"vm", ""}, {"target", "T"}, {"variant", "v"}}
	if diff := cmp.Diff(want, ts.Order); diff != "" || !ts.VM || !slicesEqual(ts.Kernels, "K") || !slicesEqual(ts.Names, "T") {
		t.Errorf("order (-want +got):\n%s\nVM %v, kernels %v, names %v", diff, ts.VM, ts.Kernels, ts.Names)
	}
	if err := ts.Use("vm", "false"); err != nil || ts.VM || len(ts.Order) != 3 {
		t.Errorf("--vm=false: err %v, VM %v, order %v", err, ts.VM, ts.Order)
	}
	if err := ts.Use("vm", "maybe"); err == nil {
		t.Error("--vm=maybe taken")
	}
}

func slicesEqual(got []string, want ...string) bool { return cmp.Equal(got, want) }

// CheckSet refuses VM settings no target would use: any on the host,
// those a named target takes from its file; a matrix's named targets
// refuse them beside a kernel too.
func TestTargetChoiceCheckSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		ts      TargetChoice
		set     []string
		each    bool
		refused string
	}{
		{"host", TargetChoice{}, []string{"--vcpus", "--kernel-cache"}, false, "--vcpus, --kernel-cache: VM settings, and this run is on the host"},
		{"kernel uses them", TargetChoice{Kernels: []string{"K"}}, []string{"--vcpus", "--cmdline"}, false, ""},
		{"named target", TargetChoice{Names: []string{"T"}}, []string{"--memory", "--deadline"}, false, "--memory: --target takes its VM settings from the targets file"},
		{"named target's deadline", TargetChoice{Names: []string{"T"}}, []string{"--deadline", "--kernel-cache"}, false, ""},
		{"beside a kernel", TargetChoice{Kernels: []string{"K"}, Names: []string{"T"}}, []string{"--accel"}, false, ""},
		{"beside a kernel, each", TargetChoice{Kernels: []string{"K"}, Names: []string{"T"}}, []string{"--accel"}, true, "--accel: --target takes"},
		{"each without names", TargetChoice{VM: true}, []string{"--accel"}, true, ""},
		// The host's clock is real: --clock real asks for what it has.
		{"host, clock real", TargetChoice{Settings: vm.Settings{Clock: vm.ClockReal}}, []string{"--clock"}, false, ""},
		{"host, clock virtual", TargetChoice{Settings: vm.Settings{Clock: vm.ClockVirtual}}, []string{"--clock"}, false, "--clock virtual: VM settings, and this run is on the host"},
		{"named target's clock", TargetChoice{Names: []string{"T"}, Settings: vm.Settings{Clock: vm.ClockVirtual}}, []string{"--clock"}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.ts.CheckSet(c.set, c.each)
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.refused != "" && (!errors.As(err, new(*InputError)) || !strings.HasPrefix(err.Error(), c.refused)):
				t.Errorf("err %v, want an InputError starting %q", err, c.refused)
			}
		})
	}
}

// Attach measures what runs on this machine, one process tree or one
// group: both, or beside a VM target, is refused before either is looked
// at.
func TestAttachRefuses(t *testing.T) {
	ss := spec(1).Scenarios
	if _, err := Attach(ss, 1, "/sys/fs/cgroup/x", true, &TargetChoice{}); !errors.As(err, new(*InputError)) || !strings.Contains(err.Error(), "--pid and --cgroup both given") {
		t.Errorf("both: %v", err)
	}
	for flag, ts := range map[string]*TargetChoice{"--pid": {VM: true}, "--cgroup": {Names: []string{"T"}}} {
		pid, cg := 1, ""
		if flag == "--cgroup" {
			pid, cg = 0, "/sys/fs/cgroup/x"
		}
		if _, err := Attach(ss, pid, cg, true, ts); !errors.As(err, new(*InputError)) || !strings.HasPrefix(err.Error(), flag+" measures what runs on this machine") {
			t.Errorf("%s beside a VM: %v", flag, err)
		}
	}
}

// In virtual time a workload that waits on a disk is not measured: the
// guest's clock jumps over the wait. A scenario named is refused; one of
// every built-in is passed over, and the Result says why.
func TestVMPrepareVirtualTimeDisk(t *testing.T) {
	ss, err := scenarios.LookupAll([]string{"fsync-scratch", "syscall-read"})
	if err != nil {
		t.Fatal(err)
	}
	virtual := &VM{Target: &vm.Target{Name: "v", Kernel: "debian:6.1-cloud", Settings: vm.Settings{Accel: "tcg", Clock: vm.ClockVirtual}}}
	req, err := virtual.Prepare(runner.Request{Scenarios: ss, SkipUnsupported: true})
	if err != nil || len(req.Scenarios) != 1 || req.Scenarios[0].Name != "syscall-read" || len(virtual.skipped) != 1 || virtual.skipped[0].Scenario != "fsync-scratch" {
		t.Errorf("every built-in in virtual time: %v, scenarios %d, skipped %+v; want syscall-read run and fsync-scratch passed over", err, len(req.Scenarios), virtual.skipped)
	}
	if _, err := virtual.Prepare(runner.Request{Scenarios: ss}); !errors.As(err, new(*InputError)) || !strings.Contains(err.Error(), "scenario fsync-scratch cannot be measured in virtual time") {
		t.Errorf("fsync-scratch named, in virtual time: %v, want an InputError", err)
	}
	real := &VM{Target: &vm.Target{Name: "r", Kernel: "debian:6.1-cloud", Settings: vm.Settings{Accel: "tcg", Clock: vm.ClockReal}}}
	if req, err := real.Prepare(runner.Request{Scenarios: ss}); err != nil || len(req.Scenarios) != 2 {
		t.Errorf("fsync-scratch in real time: %v, %d scenarios; want both to run", err, len(req.Scenarios))
	}
}

// A VM's settings are resolved once into its Setup, and a KVM that does
// not start its kernel changes that Setup, not the plan: with --clock
// auto resolved to real time under KVM, Prepare plans real time
// (lengthened trials, one boot at a time), and after the fallback to TCG
// the VM stays in real time, so that what was planned still holds and
// the comparison keeps one clock.
func TestVMFallbackKeepsPlannedClock(t *testing.T) {
	ss, err := scenarios.LookupAll([]string{"syscall-read"})
	if err != nil {
		t.Fatal(err)
	}
	v := &VM{Target: &vm.Target{Name: "k", Kernel: "debian:6.1-cloud", Settings: vm.Settings{Clock: vm.ClockAuto}}}
	// What Resolve gives where KVM runs a guest.
	v.setup = &vm.Setup{Asked: v.Target.Settings, Accel: "kvm", Why: "KVM runs a test guest", Clock: vm.RealTime, VCPUs: vm.DefaultVCPUs, MemMiB: vm.DefaultMemMiB}
	planned, err := v.Prepare(runner.Request{Scenarios: ss})
	if err != nil || planned.Scenarios[0].Duration != vmMinTrial || v.Independent() == "" {
		t.Fatalf("prepared under KVM: %v, trial %v, independent %q; want real time planned", err, planned.Scenarios[0].Duration, v.Independent())
	}
	fallback, err := v.setup.WithoutKVM("no console output in 10s")
	if err != nil {
		t.Fatal(err)
	}
	v.fellBack(fallback) // what vm.Run tells Machine.FellBack
	got, err := v.Setup()
	if err != nil || got.Accel != "tcg" || got.Clock != vm.RealTime || got.VCPUs != vm.DefaultVCPUs {
		t.Errorf("Setup after the fallback = %+v, %v; want TCG in real time with %d vCPUs", got, err, vm.DefaultVCPUs)
	}
	again, err := v.Prepare(runner.Request{Scenarios: ss})
	if err != nil || again.Scenarios[0].Duration != planned.Scenarios[0].Duration || v.Independent() == "" {
		t.Errorf("prepared after the fallback: %v, trial %v, independent %q; want the real-time plan unchanged", err, again.Scenarios[0].Duration, v.Independent())
	}
	if c, err := ClockOf(v); err != nil || c.Virtual() {
		t.Errorf("ClockOf after the fallback = %v, %v; want real time", c, err)
	}
	// Resolved once: the Setup is the one held, not resolved again.
	fresh := &VM{Target: &vm.Target{Name: "t", Kernel: "debian:6.1-cloud", Settings: vm.Settings{Accel: "tcg"}}}
	first, _ := fresh.Setup()
	fresh.Target.Clock = vm.ClockReal
	if second, _ := fresh.Setup(); second != first || !second.Clock.Virtual() {
		t.Errorf("Setup resolved again: %+v then %+v", first, second)
	}
}
