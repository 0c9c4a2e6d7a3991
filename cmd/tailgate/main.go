// Command tailgate gates CI on kernel tail latency: it runs workload
// scenarios under eBPF tracers on the running kernel or in QEMU VMs, keeps the
// latency distributions, and compares them against baselines.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"github.com/tailgate-ci/tailgate/internal/suggest"
	"github.com/tailgate-ci/tailgate/vm"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	subs    []string // its subcommands, for help, errors and completion
}

func commands() []command {
	return []command{
		{name: "run", summary: "run scenarios and write a Result", run: cmdRun},
		{name: "list", summary: "list scenarios, tracers and metrics", run: cmdList},
		{name: "compare", summary: "compare two Results and judge each percentile", run: cmdCompare},
		{name: "show", summary: "show a Result: histograms, percentiles, trials; or as CSV, OpenMetrics, benchstat", run: cmdShow},
		{name: "gate", summary: "gate two targets in one job (--kernel A --kernel B), or a run against a stored baseline", run: cmdGate},
		{name: "calibrate", summary: "run a scenario K times (--runs, default 3) and report the noise floor", run: cmdCalibrate},
		{name: "baseline", summary: "show or save stored baselines", run: cmdBaseline, subs: cmdline.SubNames(baselineSubs())},
		{name: "kernels", summary: "list cached and available kernels, fetch one", run: cmdKernels, subs: cmdline.SubNames(kernelsSubs())},
		{name: "merge", summary: "combine Results of one target (CI matrix shards)", run: cmdMerge},
		{name: "matrix", summary: "run on several kernels or host tunings, trials interleaved, side by side", run: cmdMatrix},
		{name: "doctor", summary: "check privileges, BTF, tracers, qemu and kvm", run: cmdDoctor},
		{name: "history", summary: "main's history: record Results per commit, find change points, plot them", run: cmdHistory,
			subs: cmdline.SubNames(historySubs())},
		{name: "bisect", summary: "find the commit of your program or kernel where a gated percentile regressed", run: cmdBisect},
		{name: "github", summary: "post the report as the pull request's comment (GitHub Actions)", run: cmdGitHub, subs: cmdline.SubNames(githubSubs())},
		{name: "completion", summary: "print a bash completion script: source <(tailgate completion bash)", run: cmdCompletion},
		{name: "version", summary: "print tailgate's version and commit (also --version)", run: cmdVersion},
	}
}

func usage(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: tailgate COMMAND [flags] [args]\n\ncommands:\n")
	// A summary too long for the line goes on under itself.
	const lead = 13 // "  %-10s "
	for _, c := range commands() {
		wrapped := strings.TrimSuffix(cmdline.Wrap(c.summary, cmdline.HelpWidth(w)-lead), "\n")
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, strings.ReplaceAll(wrapped, "\n", "\n"+strings.Repeat(" ", lead)))
	}
	fmt.Fprintf(&b, "\n'tailgate help COMMAND [SUBCOMMAND]' or 'tailgate COMMAND -h' shows a command's\nusage, examples and exit codes.\n\n")
	fmt.Fprint(&b, strings.TrimSuffix(helpEnd(exits{"0 pass", "1 regression", exitBadInput, exitInfraAny},
		"tailgate doctor",
		"tailgate run syscall-read --trials 5 -o read.json",
		"tailgate gate --kernel debian:6.1-cloud --kernel ./bzImage timer-1ms"), "\n"))
	cmdline.PrintHelp(w, b.String())
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// errorPrefix names the command an error came from: its subcommand too,
// when args name one ("tailgate history add").
func errorPrefix(c command, args []string) string {
	p := "tailgate " + c.name
	if len(args) > 0 && slices.Contains(c.subs, args[0]) {
		p += " " + args[0]
	}
	return p
}

// unknownCommand is the one line a mistyped command gets.
func unknownCommand(name string) string {
	msg := fmt.Sprintf("tailgate: unknown command %q", name)
	if near := suggest.Near(name, commandNames(), 3); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return msg + " ('tailgate help' lists the commands)"
}

// run is main without the process: tests drive it in-process. What it
// prints goes through plaintext.Guard: a field of a Result read back
// never begins a line that a CI runner takes for a workflow command, nor
// sends a control character to the terminal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	gout, gerr := plaintext.Guard(stdout), plaintext.Guard(stderr)
	defer gerr.Flush()
	defer gout.Flush()
	stdout, stderr = gout, gerr
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
		if err != nil && !errors.Is(err, errRegression) && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "%s: %s\n", errorPrefix(c, args[1:]), plaintext.Message(err.Error()))
		}
		return exitCode(err)
	}
	fmt.Fprintln(stderr, unknownCommand(name))
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
	if vm.IsGuest() {
		os.Exit(vm.GuestMain(engine.GuestRun))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
