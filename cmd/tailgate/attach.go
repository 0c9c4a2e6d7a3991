package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// attachFlags are run's --pid and --cgroup: measure what already runs, as
// runqlat -p and -c do, with the scenarios' tracers and none of their
// workloads.
type attachFlags struct {
	pid    int
	cgroup string
}

func (a *attachFlags) register(fs *flag.FlagSet) {
	fs.Func("pid", "measure the running process `PID`, the processes it has forked and forks, with each scenario's tracers for --duration per trial; no workload of tailgate's runs", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("want a process id, got %q", s)
		}
		a.pid = n
		return nil
	})
	fs.StringVar(&a.cgroup, "cgroup", "", "measure the tasks of the existing cgroup v2 group `PATH` (and of the groups below it), as --pid does a process; PATH as in /proc/PID/cgroup or under the cgroup2 mount")
}

func (a *attachFlags) set() bool { return a.pid != 0 || a.cgroup != "" }

// apply puts the process or group in place of each scenario's workload.
// With no scenario named, it takes every built-in that has tracers.
func (a *attachFlags) apply(ss []*scenarios.Scenario, named bool, tf *targetFlags) ([]*scenarios.Scenario, error) {
	if !a.set() {
		return ss, nil
	}
	flagName := "--pid"
	if a.cgroup != "" {
		flagName = "--cgroup"
	}
	if a.pid != 0 && a.cgroup != "" {
		return nil, usagef("--pid and --cgroup both given; measure one process tree or one group")
	}
	if len(tf.kernels) > 0 || len(tf.names) > 0 || tf.vm {
		return nil, usagef("%s measures what runs on this machine; drop --kernel, --target and --vm", flagName)
	}
	at, what, err := a.target()
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
				return nil, usagef("%s: scenario %s has no tracers, only its own workload's metrics; name one with tracers (see tailgate list)", flagName, s.Name)
			}
			continue
		}
		c.Gate = gateOn(s.Gate, metrics)
		out = append(out, &c)
	}
	return out, nil
}

// target checks the process or group and says what it is.
func (a *attachFlags) target() (scenarios.Attach, string, error) {
	if a.pid != 0 {
		if a.pid == os.Getpid() {
			return scenarios.Attach{}, "", usagef("--pid %d is this tailgate; give the process to measure", a.pid)
		}
		comm, err := processName(a.pid)
		if err != nil {
			return scenarios.Attach{}, "", usagef("--pid %d: %v; give a running process (ps -e lists them)", a.pid, err)
		}
		// The tracers follow the process's tree, and tailgate's trial
		// workers are in the tree of each of its ancestors: pid 1, the
		// shell that started it.
		if ancestorOfSelf(a.pid) {
			return scenarios.Attach{}, "", usagef("--pid %d (%s) is an ancestor of this tailgate: its process tree holds tailgate's own trial workers, which would be measured; give a process tailgate does not descend from", a.pid, comm)
		}
		return scenarios.Attach{PID: a.pid}, fmt.Sprintf("process %d (%s)", a.pid, comm), nil
	}
	g, err := cgroup.Open(a.cgroup)
	if err != nil {
		if errors.Is(err, cgroup.ErrNoCgroup2) {
			return scenarios.Attach{}, "", usagef("--cgroup %s: %v", a.cgroup, err)
		}
		return scenarios.Attach{}, "", usagef("--cgroup: %v; give a directory of the cgroup v2 hierarchy, e.g. /system.slice/ssh.service (see /proc/PID/cgroup)", err)
	}
	if mount, err := cgroup.Mount(); err == nil {
		own := filepath.Join(mount, cgroup.ParentName)
		if g.Path == own || strings.HasPrefix(g.Path, own+"/") {
			return scenarios.Attach{}, "", usagef("--cgroup %s is a group tailgate makes for its own runs and removes; give another", a.cgroup)
		}
	}
	// The group's tasks include those of the groups below it: one that
	// holds tailgate holds its trial workers, started in its group.
	if own, err := cgroup.PathOf(os.Getpid()); err == nil && (own == g.Path || strings.HasPrefix(own, strings.TrimSuffix(g.Path, "/")+"/")) {
		return scenarios.Attach{}, "", usagef("--cgroup %s holds this tailgate (in %s): tailgate's own trial workers would be measured; give a group tailgate is not in", a.cgroup, own)
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
		next, ok := parentOf(p)
		if !ok || next == p {
			return false
		}
		p = next
	}
	return false
}

// parentOf returns the parent pid of process pid (field 4 of
// /proc/PID/stat).
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// processName returns the command name of a live process.
func processName(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", errors.New("no such process")
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open || end+2 >= len(s) {
		return "", errors.New("unreadable /proc entry")
	}
	if state := s[end+2]; state == 'Z' || state == 'X' {
		return "", errors.New("the process has exited")
	}
	return s[open+1 : end], nil
}

// gateOn keeps the gate entries of metrics still measured: an attached
// process has no workload metrics (timer.lateness).
func gateOn(gate map[string]map[string]float64, metrics []string) map[string]map[string]float64 {
	if gate == nil {
		return nil
	}
	out := map[string]map[string]float64{}
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
