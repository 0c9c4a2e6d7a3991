package doctor

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/vm"
)

func TestDoctorKVMCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		kvm  vm.KVM
		ok   bool
		want []string
	}{
		{"usable", vm.KVM{Opens: true, Usable: true, Took: 3 * time.Millisecond}, true,
			[]string{"a test guest runs under KVM (probed in 3ms)", "-accel kvm"}},
		{"emulated", vm.KVM{Opens: true, Reason: "KVM_RUN: a test loop of 20000 iterations took 24ms", Took: 70 * time.Millisecond}, false,
			[]string{"/dev/kvm opens but a guest does not run (KVM_RUN: a test loop", "probed in 70ms", "VMs use TCG"}},
		{"cached", vm.KVM{Opens: true, Reason: "a VM's kernel did not start under KVM: no console output in 10s", Cached: true, CacheFile: "/c/kvm.json"}, false,
			[]string{"did not start under KVM", "found earlier this boot, in /c/kvm.json", "VMs use TCG"}},
		{"no device", vm.KVM{Reason: "open /dev/kvm: no such file or directory"}, false,
			[]string{"open /dev/kvm: no such file or directory: VMs use TCG"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := KVM(tc.kvm)
			if c.OK != tc.ok || c.Name != "kvm" {
				t.Errorf("check = %+v, want ok %v", c, tc.ok)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("detail %q lacks %q", c.Detail, w)
				}
			}
		})
	}
}

// The clocks line says which clocks VMs can run on and which auto picks:
// virtual time wants QEMU; real time is KVM's where a guest runs on it,
// emulated otherwise.
func TestClocks(t *testing.T) {
	for _, c := range []struct {
		name    string
		qemuErr error
		kvm     vm.KVM
		ok      bool
		want    []string
	}{
		{"TCG", nil, vm.KVM{}, true, []string{"virtual (QEMU 7.2.22 under TCG, 1 ns an instruction", "the default here", "real (TCG: emulated"}},
		{"KVM", nil, vm.KVM{Opens: true, Usable: true}, true, []string{"virtual (QEMU 7.2.22", "real (KVM, the default"}},
		{"no QEMU", errors.New("qemu-system-x86_64 not found"), vm.KVM{}, false, []string{"none: qemu-system-x86_64 not found"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Clocks("7.2.22", c.qemuErr, c.kvm)
			if got.OK != c.ok || got.Name != "clocks" {
				t.Errorf("check %+v, want ok %v", got, c.ok)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("detail %q lacks %q", got.Detail, w)
				}
			}
		})
	}
}

func TestGuestInit(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644)
	static := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-o", static, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	for _, tc := range []struct {
		name, exe string
		ok        bool
		detail    string
	}{
		{"static", static, true, "is static"},
		{"dynamic", sh, true, "libc"},
		{"not ELF", script, false, "script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := GuestInit(tc.exe)
			if c.OK != tc.ok || !strings.Contains(c.Detail, tc.detail) || c.Need != "VM runs" {
				t.Errorf("GuestInit(%s) = %+v, want ok %v and %q in the detail", tc.exe, c, tc.ok, tc.detail)
			}
		})
	}
}
