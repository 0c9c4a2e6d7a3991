package vm

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestProbeKVMAgreesWithQEMU runs the probe and boots the test kernel with
// QEMU under -accel kvm on the same machine: the probe must say KVM is
// usable exactly when the kernel's first console line appears.
func TestProbeKVMAgreesWithQEMU(t *testing.T) {
	testenv.Need(t, testenv.KVMDevice)
	k := testKernel(t)
	probe := ProbeKVM()
	t.Logf("probe: usable %v in %v: %s", probe.Usable, probe.Took, probe.Reason)
	if !probe.Opens {
		t.Fatalf("probe: /dev/kvm does not open: %s", probe.Reason)
	}
	if probe.Took > time.Second {
		t.Errorf("probe took %v", probe.Took)
	}

	// Well past the ~1 s a kernel takes to print its banner under KVM.
	const wait = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64",
		"-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
		"-machine", "pc", "-accel", "kvm", "-cpu", "host", "-smp", "1", "-m", "256",
		"-kernel", k.BootImage(), "-append", "console=ttyS0 earlyprintk=ttyS0 panic=-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	booted := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Linux version") {
			booted = true
			cancel()
			break
		}
	}
	cancel()
	cmd.Wait()
	t.Logf("QEMU -accel kvm: kernel banner %v after %v; stderr: %s", booted, time.Since(t0).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
	if probe.Usable != booted {
		t.Errorf("probe says usable = %v (%s), but QEMU's kernel under KVM printed its banner in %v: %v", probe.Usable, probe.Reason, wait, booted)
	}
}

// TestCheckKVMCache needs no KVM: the cache holds whatever the probe
// answers, and a stalled VM's record overrules either answer.
func TestCheckKVMCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path := filepath.Join(cache, "tailgate", "kvm.json")

	// A symlink planted at the cache file is replaced, never written
	// through.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}

	first := CheckKVM()
	if first.Cached || first.CacheFile != path {
		t.Fatalf("first CheckKVM = %+v, want a fresh probe stored in %s", first, path)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("symlink target written: %q", b)
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		t.Errorf("cache file: %v, %v", st, err)
	}
	second := CheckKVM()
	if !second.Cached || second.Usable != first.Usable || second.Reason != first.Reason {
		t.Errorf("second CheckKVM = %+v, want the first's answer from the cache (%+v)", second, first)
	}

	// Another boot's answer is not this boot's.
	writeKVMCache(path, kvmCacheEntry{BootID: "another-boot", Usable: !first.Usable, Reason: "from another boot"})
	if k := CheckKVM(); k.Cached || k.Usable != first.Usable {
		t.Errorf("CheckKVM with another boot's cache = %+v", k)
	}

	// A VM whose kernel did not start under KVM overrules the probe.
	recordKVMBroken("no console output in 10s")
	if k := CheckKVM(); k.Usable || !k.Cached || !strings.Contains(k.Reason, "did not start under KVM: no console output") {
		t.Errorf("CheckKVM after a stalled VM = %+v", k)
	}
	if a, why, _ := chooseAccel("auto"); a != "tcg" {
		t.Errorf("chooseAccel(auto) = %s (%s), want tcg saying why", a, why)
	}
	if _, _, err := chooseAccel("kvm"); err == nil || !strings.Contains(err.Error(), "did not start under KVM") {
		t.Errorf("chooseAccel(kvm) = %v, want ErrKVM saying why", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("cache dir holds %v, want kvm.json alone", ents)
	}
}
