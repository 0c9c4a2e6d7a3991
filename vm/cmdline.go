package vm

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/kernels"
)

// bootCmdline is the kernel command line of a boot: baseCmdline, the
// settings that shorten a boot under emulation, then the VM's own command
// line, which comes last so that it can override any of them.
//
// Under TCG, measured with initcall_debug on debian 6.1 cloud (2 vCPUs):
//   - cryptomgr.notests: the crypto self-tests at boot took ~190 ms
//     (crypto_algapi_init) and ~0.45 s of a run to the first result; they
//     test the kernel's crypto code, which nothing tailgate measures uses.
//   - lpj: calibrating the delay loop of the second CPU fails under
//     emulation ("calibrate_delay_direct() failed to get a good estimate")
//     and falls back to a loop of ~150 ms. The value is what the boot CPU
//     derives from the TSC, the host's under TCG: its kHz × 1000 / HZ.
//     In virtual time the guest's TSC is QEMU's instruction clock, 1 GHz
//     at shift 0, and lpj is that clock's: the host's would be wrong, and
//     would carry the runner's CPU into the command line, which the guest
//     mixes into its random pool, so that the runner would move the
//     metrics.
//   - tsc=reliable: the kernel finds the emulated CPUs' TSCs
//     unsynchronized and falls back to the HPET, whose every read is an
//     emulated device access; TCG's TSCs all follow the host's clock.
//   - initcall_blacklist=crypto_kdf108_init: the SP800-108 KDF's init is
//     its self-test alone, which cryptomgr.notests does not stop (~115 ms,
//     the slowest initcall left).
//
// None of them changes what a workload measures on the booted kernel
// beyond the clock source, which under TCG becomes the cheaper one.
//
// A seeded boot in virtual time carries its layout seed's token
// (SeedToken) before the VM's own command line.
func bootCmdline(vm Machine) string {
	parts := []string{baseCmdline}
	virtual := vm.Setup.Clock.Virtual()
	if vm.Setup.Accel != "kvm" {
		parts = append(parts, "cryptomgr.notests", "tsc=reliable", "initcall_blacklist=crypto_kdf108_init")
		mhz := hostTSCMHz("/proc/cpuinfo")
		if virtual {
			mhz = float64(1000 >> IcountShift)
		}
		if lpj := loopsPerJiffy(vm.Kernel, mhz); lpj > 0 {
			parts = append(parts, fmt.Sprintf("lpj=%d", lpj))
		}
	}
	if virtual && vm.Seed != 0 {
		parts = append(parts, SeedToken(vm.Seed))
	}
	if vm.Cmdline != "" {
		parts = append(parts, vm.Cmdline)
	}
	return strings.Join(parts, " ")
}

// loopsPerJiffy is the delay-loop calibration a guest of k would compute
// from a TSC of mhz, or 0 when mhz or k's HZ is not known.
func loopsPerJiffy(k *kernels.Kernel, mhz float64) int64 {
	if k == nil || k.Config == "" {
		return 0
	}
	cfg, err := kernels.ReadConfig(k.Config)
	if err != nil {
		return 0
	}
	hz, err := strconv.ParseInt(cfg["CONFIG_HZ"], 10, 64)
	if err != nil || hz <= 0 {
		return 0
	}
	if mhz <= 0 {
		return 0
	}
	return int64(mhz*1e6) / hz
}

// hostTSCMHz reads the first CPU's "cpu MHz" of cpuinfo, 0 if it has none
// or the CPU has no constant-rate TSC (its MHz then says nothing of the
// TSC's).
func hostTSCMHz(cpuinfo string) float64 {
	f, err := os.Open(cpuinfo)
	if err != nil {
		return 0
	}
	defer f.Close()
	var mhz float64
	constant := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if mhz > 0 {
				break // end of the first CPU
			}
			continue
		}
		switch strings.TrimSpace(k) {
		case "cpu MHz":
			mhz, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		case "flags":
			constant = strings.Contains(" "+v+" ", " constant_tsc ")
		}
	}
	if !constant {
		return 0
	}
	return mhz
}
