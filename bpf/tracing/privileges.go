package tracing

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Capability bits (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// CheckPrivileges reports, before anything is loaded, whether this process
// may load and attach tracing programs: CAP_SYS_ADMIN, or CAP_BPF with
// CAP_PERFMON. The error names what is missing.
func CheckPrivileges() error {
	eff, err := effectiveCaps()
	if err != nil {
		return nil // cannot tell; let the load say
	}
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	var missing []string
	if !has(capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(capPerfmon) {
		missing = append(missing, "CAP_PERFMON")
	}
	return fmt.Errorf("%w: missing %s (run as root, or grant CAP_BPF and CAP_PERFMON)", ErrPrivileges, strings.Join(missing, " and "))
}

func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapEff in /proc/self/status")
}

// RemoveMemlock lifts RLIMIT_MEMLOCK where the kernel charges BPF memory
// to it (before 5.11; later kernels charge the memory cgroup). It is done
// here rather than with cilium/ebpf/rlimit: that package probes the kernel
// when the process starts, and tailgate as a VM's init starts before /proc
// is mounted, where the failed probe would stay cached and fail every later
// load.
func RemoveMemlock() error {
	if memcgAccounting() {
		return nil
	}
	inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &inf); err != nil {
		return fmt.Errorf("remove memlock limit: %w", err)
	}
	return nil
}

// memcgAccounting reports whether the running kernel is 5.11 or later.
func memcgAccounting() bool {
	var uts unix.Utsname
	if unix.Uname(&uts) != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(uts.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || (major == 5 && minor >= 11)
}
