package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/proc"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Attach puts a running process tree (pid) or an existing cgroup v2 group
// in place of each scenario's workload, measured with the scenario's
// tracers; named says the scenarios were named (a named one without
// tracers is refused, the built-ins without are passed over). What runs
// on this machine is measured here: ts must be the host alone. It refuses
// both a process and a group, and a process or group that holds this
// tailgate, whose trial workers would be measured.
func Attach(ss []*scenarios.Scenario, pid int, cgroupPath string, named bool, ts *TargetChoice) ([]*scenarios.Scenario, error) {
	flagName := "--pid"
	if cgroupPath != "" {
		flagName = "--cgroup"
	}
	if pid != 0 && cgroupPath != "" {
		return nil, Inputf("--pid and --cgroup both given; measure one process tree or one group")
	}
	if len(ts.Kernels) > 0 || len(ts.Names) > 0 || ts.VM {
		return nil, Inputf("%s measures what runs on this machine; drop --kernel, --target and --vm", flagName)
	}
	at, what, err := attachTarget(pid, cgroupPath)
	if err != nil {
		return nil, err
	}
	var out []*scenarios.Scenario
	for _, s := range ss {
		c := *s
		c.Workload = scenarios.AttachWorkload(at)
		c.Warmup = 0 // nothing of tailgate's to warm up
		c.Description = what + ", with the tracers of " + s.Name
		metrics := scenarios.Metrics(&c)
		if len(metrics) == 0 {
			if named {
				return nil, Inputf("%s: scenario %s has no tracers, only its own workload's metrics; name one with tracers (see tailgate list)", flagName, s.Name)
			}
			continue
		}
		c.Gate = gateOn(s.Gate, metrics)
		out = append(out, &c)
	}
	return out, nil
}

// attachTarget checks the process or group and says what it is.
func attachTarget(pid int, cgroupPath string) (scenarios.Attach, string, error) {
	if pid != 0 {
		if pid == os.Getpid() {
			return scenarios.Attach{}, "", Inputf("--pid %d is this tailgate; give the process to measure", pid)
		}
		comm, err := processName(pid)
		if err != nil {
			return scenarios.Attach{}, "", Inputf("--pid %d: %v; give a running process (ps -e lists them)", pid, err)
		}
		// The tracers follow the process's tree, and tailgate's trial
		// workers are in the tree of each of its ancestors: pid 1, the
		// shell that started it.
		if ancestorOfSelf(pid) {
			return scenarios.Attach{}, "", Inputf("--pid %d (%s) is an ancestor of this tailgate: its process tree holds tailgate's own trial workers, which would be measured; give a process tailgate does not descend from", pid, comm)
		}
		return scenarios.Attach{PID: pid}, fmt.Sprintf("process %d (%s)", pid, comm), nil
	}
	g, err := cgroup.Open(cgroupPath)
	if err != nil {
		if errors.Is(err, cgroup.ErrNoCgroup2) {
			return scenarios.Attach{}, "", Inputf("--cgroup %s: %v", cgroupPath, err)
		}
		return scenarios.Attach{}, "", Inputf("--cgroup: %v; give a directory of the cgroup v2 hierarchy, e.g. /system.slice/ssh.service (see /proc/PID/cgroup)", err)
	}
	if mount, err := cgroup.Mount(); err == nil {
		own := filepath.Join(mount, cgroup.ParentName)
		if g.Path == own || strings.HasPrefix(g.Path, own+"/") {
			return scenarios.Attach{}, "", Inputf("--cgroup %s is a group tailgate makes for its own runs and removes; give another", cgroupPath)
		}
	}
	// The group's tasks include those of the groups below it: one that
	// holds tailgate holds its trial workers, started in its group.
	if own, err := cgroup.PathOf(os.Getpid()); err == nil && (own == g.Path || strings.HasPrefix(own, strings.TrimSuffix(g.Path, "/")+"/")) {
		return scenarios.Attach{}, "", Inputf("--cgroup %s holds this tailgate (in %s): tailgate's own trial workers would be measured; give a group tailgate is not in", cgroupPath, own)
	}
	return scenarios.Attach{Cgroup: g.Path}, "cgroup " + g.Path, nil
}

// ancestorOfSelf reports whether pid is the parent of this process, or
// its parent's parent, and so on up to pid 1.
func ancestorOfSelf(pid int) bool {
	for p, hops := os.Getppid(), 0; p > 0 && hops < 4096; hops++ {
		if p == pid {
			return true
		}
		st, err := proc.ReadStat(p)
		if err != nil || st.PPID == p {
			return false
		}
		p = st.PPID
	}
	return false
}

// processName returns the command name of a live process.
func processName(pid int) (string, error) {
	st, err := proc.ReadStat(pid)
	switch {
	case errors.Is(err, proc.ErrFormat):
		return "", errors.New("unreadable /proc entry")
	case err != nil:
		return "", errors.New("no such process")
	case st.Exited():
		return "", errors.New("the process has exited")
	}
	return st.Comm, nil
}

// gateOn keeps the gate entries of metrics still measured: an attached
// process has no workload metrics (timer.lateness).
func gateOn(gate result.GatePolicy, metrics []string) result.GatePolicy {
	if gate == nil {
		return nil
	}
	out := result.GatePolicy{}
	for m, th := range gate {
		for _, have := range metrics {
			if m == "*" || m == have {
				out[m] = th
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
