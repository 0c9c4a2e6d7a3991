package vm

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings are how a VM is asked to boot, as the flags (engine's
// TargetChoice) and a targets file (Target) give them. Check refuses
// what no boot could have; Resolve turns them, once, into the Setup a
// boot runs with.
type Settings struct {
	// VCPUs is the guest's vCPUs; 0 is the clock's own count
	// (DefaultVCPUs in real time, VirtualVCPUs in virtual time).
	VCPUs int `yaml:"vcpus"`
	// MemMiB is the guest's memory; 0 is DefaultMemMiB.
	MemMiB int `yaml:"memory_mib"`
	// Accel is "auto" (or ""): KVM when CheckKVM finds that it runs a
	// guest, else TCG; "kvm" or "tcg" insist.
	Accel string `yaml:"accel"`
	// Clock is ClockAuto (or ""), ClockVirtual or ClockReal.
	Clock string `yaml:"clock"`
	// Deadline bounds a boot; 0 is the request's own (Clock.Deadline).
	Deadline time.Duration `yaml:"deadline"`
	// Phases, in virtual time, is how many trials share one layout seed:
	// its boot saves its state once the tracers are attached, and each
	// of its trials resumes from there with a phase seed of its own
	// (RunPhases). 0 boots once per trial, its phase drawn from its
	// layout seed.
	Phases int `yaml:"phases"`
}

// Limits of the settings: a guest needs this much memory to boot a
// Debian kernel with tailgate as its init, and QEMU's TCG takes at most
// this many vCPUs here.
const (
	MinMemMiB     = 256
	MaxMemMiB     = 64 * 1024
	DefaultMemMiB = 1024
	MaxVCPUs      = 64
	// MaxPhases bounds Settings.Phases: a layout's trials run one after
	// another.
	MaxPhases = 1000
	// DefaultVCPUs is a VM's vCPU count in real time when none is given.
	DefaultVCPUs = 2
)

// SettingError is a setting no VM can have, or not with the others.
// Setting names it as a targets file does ("vcpus", "memory_mib"); Value
// is what was given, with what it clashes with; Want is what to do.
type SettingError struct {
	Setting, Value, Want string
}

func (e *SettingError) Error() string {
	return e.Setting + " " + e.Value + ": " + e.Want
}

// Accels are the values Settings.Accel takes.
var Accels = []string{"auto", "kvm", "tcg"}

// Check refuses settings that could only fail later, in QEMU or the
// guest, with a *SettingError. What the clock auto becomes is not known
// before Resolve, which refuses what it cannot have.
func (s Settings) Check() error {
	bad := func(setting, value, want string) error {
		return &SettingError{Setting: setting, Value: value, Want: want}
	}
	switch {
	case s.Accel != "" && !slices.Contains(Accels, s.Accel):
		return bad("accel", fmt.Sprintf("%q", s.Accel), "want "+strings.Join(Accels, ", "))
	case s.Clock != "" && !slices.Contains(Clocks, s.Clock):
		return bad("clock", fmt.Sprintf("%q", s.Clock), "want "+strings.Join(Clocks, ", "))
	case s.VCPUs < 0 || s.VCPUs > MaxVCPUs:
		return bad("vcpus", fmt.Sprint(s.VCPUs), fmt.Sprintf("want 1 to %d", MaxVCPUs))
	case s.MemMiB != 0 && (s.MemMiB < MinMemMiB || s.MemMiB > MaxMemMiB):
		return bad("memory_mib", fmt.Sprint(s.MemMiB), fmt.Sprintf("want %d to %d MiB (a guest needs at least %d MiB to boot)", MinMemMiB, MaxMemMiB, MinMemMiB))
	case s.Deadline < 0:
		return bad("deadline", s.Deadline.String(), "want a positive duration")
	case s.Phases < 0 || s.Phases > MaxPhases:
		return bad("phases", fmt.Sprint(s.Phases), fmt.Sprintf("want 1 to %d trials a layout, or 0 for a boot a trial", MaxPhases))
	case s.Phases > 0 && s.Clock == ClockReal:
		return errPhasesReal
	case s.Phases > 0 && s.Accel == "kvm":
		return errPhasesKVM
	case s.Clock == ClockVirtual && s.Accel == "kvm":
		return errVirtualKVM
	case s.Clock == ClockVirtual && s.VCPUs > VirtualVCPUs:
		return errVirtualVCPUs(s.VCPUs)
	}
	return nil
}

var (
	errPhasesReal = &SettingError{Setting: "phases", Value: "in real time", Want: "a trial resumes from its layout's saved state only in virtual time, where the state is the same instruction in every boot; drop phases, or use clock virtual"}
	errPhasesKVM  = &SettingError{Setting: "phases", Value: "with accel kvm", Want: "a trial resumes from its layout's saved state only in virtual time, under TCG; drop phases, or accel kvm"}
)

var errVirtualKVM = &SettingError{Setting: "clock", Value: "virtual with accel kvm", Want: "virtual time is QEMU's instruction counter, which runs under TCG, not KVM; drop accel kvm, or use clock real"}

func errVirtualVCPUs(n int) error {
	return &SettingError{Setting: "vcpus", Value: fmt.Sprintf("%d in virtual time", n), Want: fmt.Sprintf("a guest in virtual time has %d vCPU (QEMU runs its vCPUs in turn, and a second does not come up; docs/vms.md); drop vcpus, or use clock real", VirtualVCPUs)}
}

// AsksRealTime says the settings insist on real time (clock real), not
// leaving it to the accelerator.
func (s Settings) AsksRealTime() bool { return s.Clock == ClockReal }

// Setup is how a VM boots, resolved from its Settings: its accelerator
// and why, its clock, its vCPUs and memory.
type Setup struct {
	// Asked are the settings it was resolved from.
	Asked Settings
	// Accel is "kvm" or "tcg"; Why says why it was chosen.
	Accel, Why string
	Clock      Clock
	VCPUs      int
	MemMiB     int
}

// Resolve checks s and resolves it into what a boot runs with. Virtual
// time asks for TCG: with accel auto it is chosen without probing KVM.
// A bad setting is a *SettingError; accel kvm where KVM does not run a
// guest wraps ErrKVM.
func (s Settings) Resolve() (Setup, error) {
	if err := s.Check(); err != nil {
		return Setup{}, err
	}
	setup := Setup{Asked: s, MemMiB: s.MemMiB}
	if setup.MemMiB == 0 {
		setup.MemMiB = DefaultMemMiB
	}
	var err error
	if s.Clock == ClockVirtual && (s.Accel == "" || s.Accel == "auto") {
		setup.Accel, setup.Why = "tcg", "virtual time runs under TCG"
	} else if setup.Accel, setup.Why, err = chooseAccel(s.Accel); err != nil {
		return Setup{}, err
	}
	return setup.withClock()
}

// withClock gives setup the clock its settings ask for under its
// accelerator (auto: virtual under TCG, real under KVM), and the vCPUs.
func (setup Setup) withClock() (Setup, error) {
	s := setup.Asked
	setup.Clock = RealTime
	if s.Clock == ClockVirtual || (s.Clock == "" || s.Clock == ClockAuto) && setup.Accel == "tcg" {
		setup.Clock = VirtualTime
	}
	setup.VCPUs = s.VCPUs
	if s.Phases > 0 && !setup.Clock.Virtual() {
		return Setup{}, errPhasesReal
	}
	switch {
	case s.VCPUs == 0 && setup.Clock.Virtual():
		setup.VCPUs = VirtualVCPUs
	case s.VCPUs == 0:
		setup.VCPUs = DefaultVCPUs
	case s.VCPUs > VirtualVCPUs && setup.Clock.Virtual():
		return Setup{}, errVirtualVCPUs(s.VCPUs)
	}
	return setup, nil
}

// WithoutKVM is setup once KVM failed to start its kernel (why): TCG, on
// the clock and with the vCPUs setup has, since what was planned for the
// boots (their trials' length, their deadlines, whether they run at
// once) follows the clock. A setup that insists on KVM has no fallback:
// ErrKVM.
func (setup Setup) WithoutKVM(why string) (Setup, error) {
	if setup.Asked.Accel == "kvm" {
		return Setup{}, fmt.Errorf("%w: %s", ErrKVM, why)
	}
	setup.Accel, setup.Why = "tcg", "KVM did not start a kernel here: "+why
	return setup, nil
}

// chooseAccel picks the accelerator and says why.
func chooseAccel(want string) (accel, why string, err error) {
	switch want {
	case "", "auto":
		if k := CheckKVM(); !k.Usable {
			return "tcg", fmt.Sprintf("no KVM: %s", k.Reason), nil
		}
		return "kvm", "KVM runs a test guest", nil
	case "kvm":
		if k := CheckKVM(); !k.Usable {
			return "", "", fmt.Errorf("vm: %w: %s", ErrKVM, k.Reason)
		}
		return "kvm", "asked for", nil
	case "tcg":
		return "tcg", "asked for", nil
	}
	return "", "", fmt.Errorf("vm: accel %q: want auto, kvm or tcg", want)
}
