package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/tailgate-ci/tailgate/engine"
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

// apply puts the process or group in place of each scenario's workload
// (engine.Attach). With no scenario named, it takes every built-in that
// has tracers.
func (a *attachFlags) apply(ss []*scenarios.Scenario, named bool, tf *targetFlags) ([]*scenarios.Scenario, error) {
	if a.pid == 0 && a.cgroup == "" {
		return ss, nil
	}
	return engine.Attach(ss, a.pid, a.cgroup, named, &tf.TargetChoice)
}
