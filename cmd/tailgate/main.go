// Command tailgate gates CI on kernel tail latency: it runs workload
// scenarios under eBPF tracers on the running kernel or in QEMU VMs, keeps the
// latency distributions, and compares them against baselines.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/tracing"
	"github.com/tailgate-ci/tailgate/vmtest"
)

// Exit codes: CI must be able to tell "slower" from "broken".
const (
	exitPass       = 0
	exitRegression = 1
	exitUsage      = 2 // bad usage or bad input
	exitInfra      = 3 // the machinery failed: privileges, attach, VM
)

// usageError is bad usage or bad input: exit 2.
type usageError = engine.InputError

func usagef(format string, a ...any) error { return engine.Inputf(format, a...) }

// infraError is a failure of the machinery, not of the kernel under test
// (an engine.RestoreError too): exit 3.
type infraError = engine.InfraError

func infra(err error) error { return engine.Infra(err) }

// errRegression is returned when the gate found a regression; the report has
// already been written.
var errRegression = errors.New("regression")

func exitCode(err error) int {
	var u *usageError
	var i *infraError
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, errRegression):
		return exitRegression
	case errors.As(err, &u):
		return exitUsage
	case errors.Is(err, tracing.ErrBadTarget):
		// A function, symbol or binary to trace that does not exist.
		return exitUsage
	case errors.As(err, &i):
		return exitInfra
	case errors.Is(err, context.Canceled):
		return exitInfra
	default:
		return exitInfra
	}
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run scenarios and write a Result", cmdRun},
		{"list", "list scenarios, tracers and metrics", cmdList},
		{"compare", "compare two Results and judge each percentile", cmdCompare},
		{"show", "show a Result: histograms, percentiles, trials; or as CSV, OpenMetrics, benchstat", cmdShow},
		{"gate", "run, compare with the stored baseline, report: what CI calls", cmdGate},
		{"calibrate", "run a scenario twice and report the noise floor", cmdCalibrate},
		{"baseline", "show or save stored baselines", cmdBaseline},
		{"kernels", "list cached and available kernels, fetch one", cmdKernels},
		{"merge", "combine Results of one target (CI matrix shards)", cmdMerge},
		{"matrix", "run on several kernels or host tunings, trials interleaved, and compare them side by side", cmdMatrix},
		{"doctor", "check privileges, BTF, tracers, qemu and kvm", cmdDoctor},
		{"history", "main's history: record Results per commit, find change points, confirm them, plot the trend", cmdHistory},
		{"github", "post the report as the pull request's comment (GitHub Actions)", cmdGitHub},
		{"version", "print tailgate's version and commit (also --version)", cmdVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: tailgate COMMAND [flags] [args]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nexit codes: 0 pass, 1 regression, 2 bad usage or input, 3 infrastructure failure\n")
}

// run is main without the process: tests drive it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "--version" {
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	if name == "help" && len(args) > 1 {
		// "tailgate help CMD [SUB]" is "tailgate CMD [SUB] --help".
		name = args[1]
		args = append(args[1:len(args):len(args)], "--help")
	}
	if name == "-h" || name == "--help" || name == "help" {
		usage(stdout)
		return exitPass
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		if err != nil && !errors.Is(err, errRegression) {
			fmt.Fprintf(stderr, "tailgate %s: %v\n", name, err)
		}
		return exitCode(err)
	}
	fmt.Fprintf(stderr, "tailgate: unknown command %q; run 'tailgate help' for the list\n", name)
	return exitUsage
}

func main() {
	// A trial worker: tailgate re-executed itself to run one trial in a
	// fresh process.
	if runner.IsWorker() {
		os.Exit(runner.WorkerMain())
	}
	// In a VM, tailgate is PID 1: it runs the request the host put in the
	// initramfs and powers off.
	if vmtest.IsGuest() {
		os.Exit(vmtest.GuestMain(engine.GuestRun))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
