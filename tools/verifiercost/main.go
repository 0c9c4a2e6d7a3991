// Command verifiercost prints what the kernel's verifier spends on every
// BPF program of every tracer: the instructions it processed ("processed
// N insns" of its statistics log) and its time, in each variant the
// kernel loads, without evidence and with it, as a run loads them
// (tracers.LoadCosts). Run as root:
//
//	go run ./tools/verifiercost                       # this kernel
//	go run ./tools/verifiercost -kernel debian:6.12-cloud
//	go run ./tools/verifiercost -budget -kernel host \
//		-kernel debian:6.1-cloud -kernel debian:6.12-cloud > bpf/verifier-budget.tsv
//
// With -kernel SPEC it boots that kernel under QEMU with itself as the
// guest's /init, measures there (the kfunc tracer's kprobe variant too,
// which a guest's run picks only without fentry) and prints the guest's
// table. With -budget it prints, instead of tables, the most instructions
// each program took on the kernels measured with headroom, as
// bpf/verifier-budget.tsv has them (TestVerifierBudget holds this
// kernel's counts to it). Build it static (CGO_ENABLED=0, as make does)
// for a guest to run it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tailgate-ci/tailgate/bpf/interfere"
	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/vm"
)

func main() {
	if vm.IsGuest() {
		os.Exit(vm.GuestMain(guest))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// kernelFlag is the -kernel flag, which may be given more than once.
type kernelFlag []string

func (k *kernelFlag) String() string     { return strings.Join(*k, ",") }
func (k *kernelFlag) Set(s string) error { *k = append(*k, s); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verifiercost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var specs kernelFlag
	fs.Var(&specs, "kernel", "a kernel SPEC to boot and measure in (debian:6.12-cloud), or host for this kernel;\nmay be repeated (default host)")
	printBudget := fs.Bool("budget", false, "print the counts with headroom as bpf/verifier-budget.tsv, the most of the kernels'")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "verifiercost: unexpected argument %q; kernels are given with -kernel\n", fs.Arg(0))
		return 2
	}
	if len(specs) == 0 {
		specs = kernelFlag{"host"}
	}
	var all []tracers.LoadCost
	for i, spec := range specs {
		var costs []tracers.LoadCost
		var release string
		var err error
		if spec == "host" {
			costs, err = measure(false)
			release = kernelRelease()
		} else {
			costs, release, err = inGuest(spec, stderr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "verifiercost: %s: %v\n", spec, err)
			return 3
		}
		all = append(all, costs...)
		if *printBudget {
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "kernel %s\n\n", release)
		writeTable(stdout, costs)
	}
	if *printBudget {
		writeBudget(stdout, all, specs)
	}
	return 0
}

// measure measures on this kernel (in a guest, the tracers a guest runs),
// and the kfunc tracer's kprobe variant where its Probe picked fentry.
func measure(guest bool) ([]tracers.LoadCost, error) {
	costs, err := tracers.LoadCosts(tracers.CostOptions{Guest: guest})
	if err != nil {
		return costs, err
	}
	if !slices.ContainsFunc(costs, func(c tracers.LoadCost) bool { return c.Variant == kfunc.Fentry }) {
		return costs, nil
	}
	ilog, err := interfere.Load(interfere.Options{})
	if err != nil {
		return costs, err
	}
	defer ilog.Close()
	for _, evidence := range []bool{false, true} {
		opts := tracing.TracerOptions{TGID: uint32(os.Getpid()), VerifierStats: true}
		if evidence {
			opts.Evidence, opts.Interference = 10, ilog.Map()
		}
		t, err := kfunc.New(kfunc.Options{TracerOptions: opts, Functions: []string{"vfs_read"}, Variant: kfunc.Kprobe})
		if err != nil {
			return costs, err
		}
		lc, err := t.LoadCost()
		t.Close()
		if err != nil {
			return costs, err
		}
		costs = append(costs, tracers.LoadCost{Tracer: "kfunc", Variant: kfunc.Kprobe, Evidence: evidence, LoadCost: lc})
	}
	return costs, nil
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// costLine is how the guest sends one program's cost on its console:
// tracer, variant, evidence, program, insns, verify µs, tracer load µs.
const costLine = "cost\t"

func guest(ctx context.Context, req vm.GuestRequest, progress func(string)) (*result.Result, error) {
	res := &result.Result{Schema: result.SchemaVersion, Started: time.Now(), Scenarios: []result.Scenario{},
		Environment: result.Environment{KernelRelease: kernelRelease()}}
	costs, err := measure(true)
	for _, c := range costs {
		for _, p := range c.Programs {
			progress(fmt.Sprintf("%s%s\t%s\t%v\t%s\t%d\t%d\t%d", costLine, c.Tracer, c.Variant, c.Evidence,
				p.Program, p.Insns, p.Verify.Microseconds(), c.Took.Microseconds()))
		}
	}
	res.Finished = time.Now()
	return res, err
}

func inGuest(spec string, stderr io.Writer) ([]tracers.LoadCost, string, error) {
	ctx := context.Background()
	cache, err := kernels.DefaultCache()
	if err != nil {
		return nil, "", err
	}
	k, err := cache.Resolve(ctx, spec)
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	var costs []tracers.LoadCost
	var perr error
	progress := func(s string) {
		rest, ok := strings.CutPrefix(s, costLine)
		if !ok {
			fmt.Fprintln(stderr, s)
			return
		}
		if err := addCostLine(&costs, rest); err != nil && perr == nil {
			perr = fmt.Errorf("guest line %q: %w", s, err)
		}
	}
	setup, err := vm.Settings{VCPUs: 1, MemMiB: 1024}.Resolve()
	if err != nil {
		return costs, "", err
	}
	m := vm.Machine{Name: "verifiercost", Kernel: k, Init: self, Setup: setup, Deadline: 20 * time.Minute}
	res, err := vm.Run(ctx, m, vm.GuestRequest{}, progress)
	if err != nil {
		return costs, "", err
	}
	return costs, res.Environment.KernelRelease, perr
}

// addCostLine adds a guest's cost line to costs, a program to its
// tracer's load.
func addCostLine(costs *[]tracers.LoadCost, line string) error {
	f := strings.Split(line, "\t")
	if len(f) != 7 {
		return errors.New("want 7 fields")
	}
	var n [3]int64
	for i, s := range f[4:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		n[i] = v
	}
	evidence := f[2] == "true"
	p := tracing.ProgramLoad{Program: f[3], Insns: uint32(n[0]), Verify: time.Duration(n[1]) * time.Microsecond}
	cs := *costs
	if i := len(cs) - 1; i >= 0 && cs[i].Tracer == f[0] && string(cs[i].Variant) == f[1] && cs[i].Evidence == evidence {
		cs[i].Programs = append(cs[i].Programs, p)
		return nil
	}
	*costs = append(cs, tracers.LoadCost{Tracer: f[0], Variant: tracing.Variant(f[1]), Evidence: evidence,
		LoadCost: tracing.LoadCost{Took: time.Duration(n[2]) * time.Microsecond, Programs: []tracing.ProgramLoad{p}}})
	return nil
}

// writeTable writes a Markdown table: one row per program, and one per
// tracer load with its whole time.
func writeTable(w io.Writer, costs []tracers.LoadCost) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| tracer\t variant\t evidence\t program\t insns processed\t verifier time\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---:\t---:\t")
	for _, c := range costs {
		ev := "no"
		if c.Evidence {
			ev = "yes"
		}
		var insns uint64
		for _, p := range c.Programs {
			insns += uint64(p.Insns)
			fmt.Fprintf(tw, "| %s\t %s\t %s\t %s\t %d\t %s\t\n", c.Tracer, c.Variant, ev, p.Program, p.Insns, ms(p.Verify))
		}
		fmt.Fprintf(tw, "| %s\t %s\t %s\t **whole load**\t %d\t %s\t\n", c.Tracer, c.Variant, ev, insns, ms(c.Took))
	}
	tw.Flush()
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

// writeBudget writes the budget file: each program's count with a
// quarter more (at least 50) as its budget, the most of its variants'
// counts where one program serves several (kfunc).
func writeBudget(w io.Writer, costs []tracers.LoadCost, specs []string) {
	budgets := map[string]uint32{}
	var keys []string
	for _, c := range costs {
		for _, p := range c.Programs {
			k := c.BudgetKey(p.Program)
			if _, ok := budgets[k]; !ok {
				keys = append(keys, k)
			}
			budgets[k] = max(budgets[k], budget(p.Insns))
		}
	}
	slices.Sort(keys)
	fmt.Fprintln(w, "# The instructions the verifier may process for each program, held by")
	fmt.Fprintln(w, "# TestVerifierBudget: the most it took on these kernels, and a quarter more.")
	fmt.Fprintf(w, "# go run ./tools/verifiercost -budget -kernel %s\n", strings.Join(specs, " -kernel "))
	fmt.Fprintln(w, "# tracer\tprogram\tevidence\tbudget")
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%d\n", k, budgets[k])
	}
}

// budget is the budget of a program that verified in insns
// instructions: a quarter more, at least 50 more, rounded up to 10.
func budget(insns uint32) uint32 {
	b := max(insns+insns/4, insns+50)
	return (b + 9) / 10 * 10
}
