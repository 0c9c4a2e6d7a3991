// Command guest is a small guest /init for the vm end-to-end tests. It
// reports the kernel release, or misbehaves as the kernel command line's
// tgtest= option asks: panic (the kernel crashes through sysrq), exit (init
// exits, so the kernel panics), sleep (never answers), error (the run
// fails), gopanic (the run panics), loop (passes the checkpoint when asked,
// then times a loop of getppid calls for 20 ms of guest time).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/vm"
)

func main() {
	if !vm.IsGuest() {
		fmt.Fprintln(os.Stderr, "guest: not running as a tailgate VM's init")
		os.Exit(2)
	}
	os.Exit(vm.GuestMain(run))
}

func run(ctx context.Context, req vm.GuestRequest, progress func(string)) (*result.Result, error) {
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return nil, err
	}
	mode := ""
	for _, f := range strings.Fields(string(cmdline)) {
		if v, ok := strings.CutPrefix(f, "tgtest="); ok {
			mode = v
		}
	}
	progress("test guest mode " + mode)
	switch mode {
	case "panic":
		os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0)
		time.Sleep(time.Minute)
	case "exit":
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Hour)
	case "error":
		return nil, errors.New("the workload failed on purpose")
	case "gopanic":
		panic("the workload panicked on purpose")
	case "loop":
		return loop(ctx, req, progress)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	release := unix.ByteSliceToString(u.Release[:])
	// Show that the mounts the tracers need are there, and the config.
	for _, p := range []string{"/sys/kernel/tracing/trace_pipe", "/sys/fs/cgroup/cgroup.controllers", "/sys/fs/bpf", "/boot/config-" + release} {
		if _, err := os.Stat(p); err != nil {
			return nil, err
		}
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Started:     time.Now(),
		Finished:    time.Now(),
		Environment: result.Environment{KernelRelease: release},
		Scenarios:   []result.Scenario{},
	}, nil
}

// loop passes the checkpoint when the request asks for it, then times
// getppid calls for 20 ms of guest time: each call's time holds the
// guest's timer interrupts that land in it, so the histogram's tail
// follows where the loop starts against the guest's tick.
func loop(ctx context.Context, req vm.GuestRequest, progress func(string)) (*result.Result, error) {
	if req.Checkpoint {
		seed, err := vm.Checkpoint(ctx)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("phase seed %d", seed))
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	progress(fmt.Sprintf("loop starts at %d ns", ts.Nano()))
	h := hist.New()
	start := time.Now()
	last := start
	var ops uint64
	for last.Sub(start) < 20*time.Millisecond {
		unix.Getppid()
		now := time.Now()
		h.Record(uint64(now.Sub(last)))
		last = now
		ops++
	}
	return &result.Result{
		Schema:   result.SchemaVersion,
		Started:  start,
		Finished: last,
		Scenarios: []result.Scenario{{
			Name: "loop", Trials: 1,
			Metrics: map[string]*result.Metric{"getppid": {Unit: "ns", Trials: []result.Trial{{
				Histogram: h, Summary: result.Summarize(h), Ops: ops, Duration: last.Sub(start).Seconds(),
			}}}},
		}},
	}, nil
}
