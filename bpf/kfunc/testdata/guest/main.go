// Command guest is the /init of the kfunc tracer's VM test: in a Debian
// guest, where both fentry and kprobes work, it runs the tracer on
// vfs_read and kernel_clone with each variant forced and with the variant
// left to the tracer, over a workload of known counts, and sends the
// histograms back as a Result: one scenario per run, named kfunc-VARIANT
// (kfunc-auto for the tracer's own pick), each metric's trial carrying
// the workload's count as Ops. The host test judges the numbers.
//
// Run with an argument, it is one of the workload's processes instead:
// "exit" exits at once (a clone to count), "reader N" reads /dev/zero N
// times after a line on stdin (a process the tracer must not count).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/kfunc"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/vm"
)

// The workload: reads of 4 KiB from /dev/zero by this process, processes
// started (one kernel_clone each in this process), and reads by a process
// started before the tracer, which is no child it follows.
const (
	reads       = 3000
	clones      = 30
	otherReads  = 5000
	readSize    = 4096
	probeResult = "kfunc-probe"
	evidence    = 3 // slowest calls kept per function
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(child(os.Args[1:]))
	}
	if !vm.IsGuest() {
		fmt.Fprintln(os.Stderr, "guest: not running as a tailgate VM's init")
		os.Exit(2)
	}
	os.Exit(vm.GuestMain(run))
}

func child(args []string) int {
	switch args[0] {
	case "exit":
		return 0
	case "reader":
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return 2
		}
		var line [1]byte
		if _, err := os.Stdin.Read(line[:]); err != nil {
			return 1
		}
		if err := readZero(n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	return 2
}

func readZero(n int) error {
	f, err := os.Open("/dev/zero")
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, readSize)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range n {
		if _, err := unix.Read(int(f.Fd()), buf); err != nil {
			return err
		}
	}
	return nil
}

func run(ctx context.Context, req vm.GuestRequest, progress func(string)) (*result.Result, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	res := &result.Result{
		Schema:      result.SchemaVersion,
		Started:     time.Now(),
		Environment: result.Environment{KernelRelease: unix.ByteSliceToString(u.Release[:])},
		Scenarios:   []result.Scenario{},
	}
	if err := tracing.RemoveMemlock(); err != nil {
		return nil, err
	}

	// What Probe says this kernel allows, as tailgate doctor will show it.
	v, err := kfunc.Probe()
	if err != nil {
		return res, fmt.Errorf("probe: %w", err)
	}
	res.Scenarios = append(res.Scenarios, result.Scenario{
		Name: probeResult, Tracers: []result.TracerInfo{{Name: "kfunc", Variant: string(v)}},
		Metrics: map[string]*result.Metric{},
	})
	progress("kfunc.Probe: " + string(v))

	for _, v := range []tracing.Variant{"", kfunc.Fentry, kfunc.Kprobe} {
		s, err := measure(v)
		if err != nil {
			return res, fmt.Errorf("variant %q: %w", v, err)
		}
		progress(fmt.Sprintf("%s attached as %s: vfs_read %d, kernel_clone %d", s.Name, s.Tracers[0].Variant,
			s.Metrics["kfunc.vfs_read"].Trials[0].Summary.Count, s.Metrics["kfunc.kernel_clone"].Trials[0].Summary.Count))
		res.Scenarios = append(res.Scenarios, *s)
	}

	// A misspelt function is bad input, named with the guest kernel's
	// nearest functions.
	_, err = kfunc.New(kfunc.Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Functions: []string{"vfs_raed"}})
	var ue *kfunc.UnknownFunctionError
	if !errors.As(err, &ue) || !slices.Contains(ue.Near, "vfs_read") {
		return res, fmt.Errorf("vfs_raed: %v, want an *UnknownFunctionError naming vfs_read", err)
	}
	progress("vfs_raed: " + err.Error())
	res.Finished = time.Now()
	return res, nil
}

// measure runs the tracer (variant v, or its own pick) over the workload.
func measure(v tracing.Variant) (*result.Scenario, error) {
	other := exec.Command("/init", "reader", strconv.Itoa(otherReads))
	other.Stderr = os.Stderr
	go1, err := other.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := other.Start(); err != nil {
		return nil, err
	}
	defer other.Process.Kill()

	tr, err := kfunc.New(kfunc.Options{
		TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: evidence},
		Functions:     []string{"vfs_read", "kernel_clone"},
		Variant:       v,
	})
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	t0 := time.Now()
	if _, err := io.WriteString(go1, "go\n"); err != nil {
		return nil, err
	}
	if err := readZero(reads); err != nil {
		return nil, err
	}
	for range clones {
		if err := exec.Command("/init", "exit").Run(); err != nil {
			return nil, err
		}
	}
	if err := other.Wait(); err != nil {
		return nil, fmt.Errorf("reader: %w", err)
	}
	took := time.Since(t0)
	hs, err := tr.Read()
	if err != nil {
		return nil, err
	}
	missed, err := tr.Missed()
	if err != nil {
		return nil, err
	}
	if missed > 0 {
		return nil, fmt.Errorf("the tracer missed %d events", missed)
	}
	if err := checkEvidence(tr); err != nil {
		return nil, err
	}
	name := "kfunc-" + string(v)
	if v == "" {
		name = "kfunc-auto"
	}
	s := &result.Scenario{
		Name:    name,
		Tracers: []result.TracerInfo{{Name: "kfunc", Variant: string(tr.Variant())}},
		Metrics: map[string]*result.Metric{},
		Trials:  1,
	}
	ops := map[string]uint64{"kfunc.vfs_read": reads, "kfunc.kernel_clone": clones}
	for m, h := range hs {
		s.Metrics[m] = &result.Metric{Unit: "ns", Trials: []result.Trial{{
			Histogram: h, Summary: result.Summarize(h), Ops: ops[m], Duration: took.Seconds(),
		}}}
	}
	return s, nil
}

// checkEvidence checks the slowest calls the tracer kept: as many as asked
// for, of the workload, with a kernel stack that shows the way in (read
// through ksys_read; clone through its syscall).
func checkEvidence(tr *tracing.Tracer) error {
	evs, dropped, err := tr.Evidence()
	if err != nil {
		return err
	}
	sym := symbols.NewSymbolizer()
	for m, caller := range map[string]string{"kfunc.vfs_read": "ksys_read", "kfunc.kernel_clone": "sys_clone"} {
		got := evs[m]
		if len(got) != evidence {
			return fmt.Errorf("%d events of %s, want %d (dropped %d)", len(got), m, evidence, dropped)
		}
		for _, e := range got {
			stack := strings.Join(sym.Frames(e.KernelStack, false, e.PID), " ")
			// This process or a child it started, all /init.
			if e.Comm != "init" || !strings.Contains(stack, caller) {
				return fmt.Errorf("%s event of pid %d (%s), kernel stack %s: want the workload's, through %s", m, e.PID, e.Comm, stack, caller)
			}
		}
	}
	return nil
}
