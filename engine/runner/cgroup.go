package runner

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/proc"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Whom the tracers count. A workload of the built-in kinds runs in this
// process: its threads (ThreadsAttributable), or the whole process. An
// exec workload runs in a cgroup v2 group of its own, made per trial
// worker, and the tracers count that group's tasks, in the kernel, by its
// id; attach counts a running process tree (--pid) or an existing group
// (--cgroup).

// traceOptions returns the tracer options that count workload wl's tasks.
func traceOptions(wl scenarios.Runner, w scenarios.Workload, kb kernelBTF) tracing.TracerOptions {
	opts := tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: scenarios.ThreadsAttributable(w), BTF: kb.cache, KernelTypes: kb.types, Loaded: kb.loaded}
	if t, ok := scenarios.TasksOf(wl); ok {
		opts.Threads = false
		opts.TGID = uint32(t.PID)
		opts.CgroupID = t.CgroupID
	}
	return opts
}

// followTree makes the tracers count, beside an attached process, the
// processes it forked before they attached, and theirs: the fork program
// follows only what is forked from now on. It runs after the tracers
// attach, so that a process forked meanwhile is either listed here or
// forked by a followed one.
func followTree(wl scenarios.Runner, ts []*tracing.Tracer) error {
	t, ok := scenarios.TasksOf(wl)
	if !ok || t.PID == 0 || len(ts) == 0 {
		return nil
	}
	for _, pid := range descendants(t.PID) {
		for _, tr := range ts {
			if err := tr.FollowProcess(pid); err != nil {
				return err
			}
		}
	}
	return nil
}

// descendants returns the processes below pid in the process tree, from
// the parent pid of each process in /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := proc.ReadStat(p); err == nil {
			children[st.PPID] = append(children[st.PPID], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// startWorkload starts what the next run of wl measures (an exec
// workload's command, until it is ready) before the run's clock starts
// and the tracers are reset.
func startWorkload(ctx context.Context, wl scenarios.Runner) error {
	if err := scenarios.Start(ctx, wl); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("workload: %w", err)
	}
	return nil
}

// removeStaleGroups removes the cgroups that trial workers which are gone
// left behind: a worker killed outright (its parent's grace ran out, or
// it crashed) cannot remove its exec workload's group, and what runs in
// it. It returns nothing: a group that cannot be removed now is tried
// again by the next run, and the trial's own error says what went wrong.
func removeStaleGroups() {
	_, _ = cgroup.RemoveStale()
}
