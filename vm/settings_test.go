package vm

import (
	"errors"
	"strings"
	"testing"
)

// mustSetup resolves s for a test.
func mustSetup(t *testing.T, s Settings) Setup {
	t.Helper()
	setup, err := s.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return setup
}

func TestSettingsResolve(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want Setup
		err  string
	}{
		{Settings{Accel: "tcg"}, Setup{Accel: "tcg", Clock: VirtualTime, VCPUs: 1, MemMiB: DefaultMemMiB}, ""},
		{Settings{Accel: "tcg", Clock: ClockAuto, MemMiB: 512}, Setup{Accel: "tcg", Clock: VirtualTime, VCPUs: 1, MemMiB: 512}, ""},
		{Settings{Accel: "tcg", Clock: ClockReal}, Setup{Accel: "tcg", Clock: RealTime, VCPUs: DefaultVCPUs, MemMiB: DefaultMemMiB}, ""},
		{Settings{Accel: "tcg", Clock: ClockReal, VCPUs: 4}, Setup{Accel: "tcg", Clock: RealTime, VCPUs: 4, MemMiB: DefaultMemMiB}, ""},
		{Settings{Accel: "tcg", Clock: ClockVirtual, VCPUs: 1}, Setup{Accel: "tcg", Clock: VirtualTime, VCPUs: 1, MemMiB: DefaultMemMiB}, ""},
		// Virtual time is TCG's: auto does not probe KVM for it.
		{Settings{Accel: "auto", Clock: ClockVirtual}, Setup{Accel: "tcg", Clock: VirtualTime, VCPUs: 1, MemMiB: DefaultMemMiB}, ""},
		{Settings{Accel: "kvm", Clock: ClockVirtual}, Setup{}, "clock virtual with accel kvm: virtual time is QEMU's instruction counter, which runs under TCG"},
		{Settings{Accel: "tcg", Clock: ClockVirtual, VCPUs: 2}, Setup{}, "vcpus 2 in virtual time"},
		// Auto is virtual under TCG: 2 vCPUs are refused once resolved.
		{Settings{Accel: "tcg", Clock: ClockAuto, VCPUs: 2}, Setup{}, "vcpus 2 in virtual time"},
		{Settings{Accel: "tcg", Clock: "sundial"}, Setup{}, `clock "sundial": want auto, virtual, real`},
		{Settings{Accel: "xen"}, Setup{}, `accel "xen": want auto, kvm, tcg`},
		{Settings{VCPUs: 65}, Setup{}, "vcpus 65: want 1 to 64"},
		{Settings{MemMiB: 16}, Setup{}, "memory_mib 16: want 256 to 65536 MiB"},
		{Settings{MemMiB: MaxMemMiB + 1}, Setup{}, "memory_mib 65537: want 256 to 65536 MiB"},
		{Settings{Deadline: -1}, Setup{}, "deadline -1ns: want a positive duration"},
		{Settings{Accel: "tcg", Clock: ClockVirtual, Phases: 4}, Setup{Accel: "tcg", Clock: VirtualTime, VCPUs: 1, MemMiB: DefaultMemMiB}, ""},
		{Settings{Accel: "tcg", Phases: -1}, Setup{}, "phases -1: want 1 to 1000 trials a layout"},
		{Settings{Accel: "tcg", Clock: ClockReal, Phases: 4}, Setup{}, "phases in real time: a trial resumes from its layout's saved state only in virtual time"},
		{Settings{Accel: "kvm", Phases: 4}, Setup{}, "phases with accel kvm"},
	} {
		got, err := tc.s.Resolve()
		if tc.err != "" {
			var se *SettingError
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("Resolve(%+v) = %+v, %v; want a *SettingError starting %q", tc.s, got, err, tc.err)
			}
			if cerr := tc.s.Check(); cerr != nil && cerr.Error() != err.Error() {
				t.Errorf("Check(%+v) = %v, Resolve says %v: one set of limits", tc.s, cerr, err)
			}
			continue
		}
		got.Why, got.Asked = "", Settings{}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%+v) = %+v, %v; want %+v", tc.s, got, err, tc.want)
		}
	}
}

// The clock's methods say what each clock means to a boot.
func TestClock(t *testing.T) {
	if !VirtualTime.Virtual() || RealTime.Virtual() || !VirtualTime.Independent() || RealTime.Independent() {
		t.Error("Virtual/Independent wrong")
	}
	if VirtualTime.String() != ClockVirtual || RealTime.String() != ClockReal {
		t.Errorf("String: %s, %s", VirtualTime, RealTime)
	}
	if RealTime.QEMUArgs() != nil || !strings.Contains(strings.Join(VirtualTime.QEMUArgs(), " "), "-icount shift=0,sleep=off") {
		t.Errorf("QEMUArgs: real %v, virtual %v", RealTime.QEMUArgs(), VirtualTime.QEMUArgs())
	}
	if v, r := VirtualTime.Deadline(1e9), RealTime.Deadline(1e9); v <= r || r <= 2e9 {
		t.Errorf("Deadline of 1 s: virtual %v, real %v", v, r)
	}
}

// A KVM that did not start its kernel changes the Setup: TCG, on the
// clock and with the vCPUs planned for, so that a clock auto resolved to
// real time under KVM stays in real time; a Setup that insisted on KVM
// has no fallback.
func TestSetupWithoutKVM(t *testing.T) {
	kvm := Setup{Asked: Settings{Clock: ClockAuto}, Accel: "kvm", Clock: RealTime, VCPUs: DefaultVCPUs, MemMiB: 1024}
	got, err := kvm.WithoutKVM("no console output in 10s")
	if err != nil || got.Accel != "tcg" || got.Clock != RealTime || got.VCPUs != DefaultVCPUs || got.MemMiB != 1024 || !strings.Contains(got.Why, "no console output") {
		t.Errorf("WithoutKVM = %+v, %v; want TCG in real time with %d vCPUs", got, err, DefaultVCPUs)
	}
	kvm.Asked.Accel = "kvm"
	if _, err := kvm.WithoutKVM("x"); !errors.Is(err, ErrKVM) {
		t.Errorf("WithoutKVM of accel kvm = %v, want ErrKVM", err)
	}
}
