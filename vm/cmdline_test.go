package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/kernels"
)

func TestBootCmdline(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(config, []byte("CONFIG_HZ_250=y\nCONFIG_HZ=250\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vm := Machine{Kernel: &kernels.Kernel{Config: config}, Cmdline: "cryptomgr.notests=0 quiet", Setup: Setup{Accel: "tcg", Clock: RealTime}}
	tcg := bootCmdline(vm)
	if !strings.HasPrefix(tcg, baseCmdline+" ") || !strings.HasSuffix(tcg, " "+vm.Cmdline) {
		t.Errorf("TCG command line %q: want the base first and the VM's own last", tcg)
	}
	for _, want := range []string{" cryptomgr.notests ", " tsc=reliable ", " initcall_blacklist=crypto_kdf108_init "} {
		if !strings.Contains(tcg, want) {
			t.Errorf("TCG command line %q lacks %q", tcg, want)
		}
	}
	if mhz := hostTSCMHz("/proc/cpuinfo"); mhz > 0 && !strings.Contains(tcg, " lpj=") {
		t.Errorf("host TSC at %.0f MHz but no lpj in %q", mhz, tcg)
	}
	kvm := vm
	kvm.Setup.Accel = "kvm"
	if got := bootCmdline(kvm); got != baseCmdline+" "+vm.Cmdline {
		t.Errorf("KVM command line %q: want only the base and the VM's own", got)
	}
	if got := bootCmdline(Machine{Setup: Setup{Accel: "tcg"}}); strings.Contains(got, "lpj=") {
		t.Errorf("no kernel config, yet %q sets lpj", got)
	}
	// Virtual time: the lpj of QEMU's 1 GHz instruction clock, whatever
	// the host's CPU, and a seed's token of one length for every seed,
	// before the VM's own command line.
	virtual := vm
	virtual.Setup.Clock, virtual.Seed = VirtualTime, 1
	got := bootCmdline(virtual)
	if !strings.Contains(got, " lpj=4000000 ") || !strings.HasSuffix(got, " "+SeedToken(1)+" "+vm.Cmdline) {
		t.Errorf("virtual time, seed 1: %q; want lpj=4000000 (1 GHz at 250 Hz), and %s before the VM's own", got, SeedToken(1))
	}
	virtual.Seed = 1 << 40
	if other := bootCmdline(virtual); len(other) != len(got) || other == got {
		t.Errorf("seeds 1 and 2^40: %q and %q; want two command lines of one length", got, other)
	}
	virtual.Seed = 0
	if unseeded := bootCmdline(virtual); strings.Contains(unseeded, seedTokenKey) {
		t.Errorf("unseeded: %q carries a seed", unseeded)
	}
}

func TestHostTSCMHz(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "cpuinfo")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := "processor\t: 0\ncpu MHz\t\t: 2200.000\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n" +
		"processor\t: 1\ncpu MHz\t\t: 1800.000\nflags\t\t: fpu tsc constant_tsc\n\n"
	if got := hostTSCMHz(write(two)); got != 2200 {
		t.Errorf("first CPU at 2200 MHz: got %v", got)
	}
	varying := "processor\t: 0\ncpu MHz\t\t: 2200.000\nflags\t\t: fpu tsc\n\n"
	if got := hostTSCMHz(write(varying)); got != 0 {
		t.Errorf("no constant_tsc: got %v MHz, want 0", got)
	}
	if got := hostTSCMHz(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("no cpuinfo: got %v", got)
	}
}
