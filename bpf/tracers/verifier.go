package tracers

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/ufunc"
)

// LoadCost is what loading one tracer cost, in one variant, with evidence
// or without.
type LoadCost struct {
	// Tracer is the tracer's name; "interfere" for the evidence's
	// interference log.
	Tracer   string
	Variant  tracing.Variant
	Evidence bool
	tracing.LoadCost
}

// BudgetKey names one program of c as bpf/verifier-budget.tsv does:
// tracer, program, and "evidence" or "plain", tab-separated.
func (c LoadCost) BudgetKey(program string) string {
	ev := "plain"
	if c.Evidence {
		ev = "evidence"
	}
	return c.Tracer + "\t" + program + "\t" + ev
}

// CostOptions configure LoadCosts.
type CostOptions struct {
	// BTF is the decoded kernel BTF, shared between the loads as a run
	// shares it; nil decodes it once for them.
	BTF *btf.Cache
	// KernelTypes stand in for the kernel's BTF as in a guest's run
	// (tracing.TracerOptions.KernelTypes): tracepoint tracers then load
	// raw_tp only. nil measures tp_btf, then raw_tp against the kernel's
	// own BTF.
	KernelTypes *btf.Spec
	// Guest leaves out the tracers a VM's guest cannot run (Kind.HostOnly).
	Guest bool
	// Progress, when set, hears of each load.
	Progress func(LoadCost)
}

// evidenceKept is the evidence LoadCosts loads with: it sizes the ring,
// not the programs.
const evidenceKept = 10

// LoadCosts loads every tracer of All with its Probe config as a run
// loads it, in each variant this kernel loads, without evidence and with
// it (and the interference log, as a run with evidence has it), with the
// verifier's statistics on (tracing.TracerOptions.VerifierStats), and
// returns what each load cost. A tracer this kernel cannot load
// (ebpf.ErrNotSupported) is left out.
func LoadCosts(o CostOptions) ([]LoadCost, error) {
	if err := tracing.RemoveMemlock(); err != nil {
		return nil, err
	}
	if o.BTF == nil {
		o.BTF = btf.NewCache()
	}
	types := []*btf.Spec{o.KernelTypes}
	if o.KernelTypes == nil {
		kernel, err := o.BTF.Kernel()
		if err != nil {
			return nil, fmt.Errorf("kernel BTF: %w", err)
		}
		types = []*btf.Spec{nil, kernel}
	}
	var costs []LoadCost
	add := func(c LoadCost) {
		costs = append(costs, c)
		if o.Progress != nil {
			o.Progress(c)
		}
	}
	for i, kt := range types {
		ilog, err := LoadInterference(tracing.TracerOptions{BTF: o.BTF, KernelTypes: kt, VerifierStats: true})
		if err != nil {
			return costs, err
		}
		lc, err := ilog.LoadCost()
		if err != nil {
			ilog.Close()
			return costs, fmt.Errorf("%s: %w", Interference.Name, err)
		}
		add(LoadCost{Tracer: Interference.Name, Variant: ilog.Variant(), Evidence: true, LoadCost: lc})
		for _, k := range All {
			if o.Guest && k.HostOnly != "" {
				continue
			}
			for _, probe := range probesOf(k) {
				for _, evidence := range []bool{false, true} {
					opts := tracing.TracerOptions{TGID: uint32(os.Getpid()), BTF: o.BTF, KernelTypes: kt, VerifierStats: true}
					if evidence {
						opts.Evidence, opts.Interference = evidenceKept, ilog.Map()
					}
					c, err := loadCost(k, probe, opts)
					if errors.Is(err, ebpf.ErrNotSupported) {
						break
					}
					if err != nil {
						ilog.Close()
						return costs, err
					}
					// Tracers that attach their own way (kfunc, ufunc) load
					// the same variant with the kernel's types given.
					if i > 0 && c.Variant != tracing.RawTP {
						break
					}
					c.Evidence = evidence
					add(c)
				}
			}
		}
		if err := ilog.Close(); err != nil {
			return costs, err
		}
	}
	return costs, nil
}

// probesOf is the configs k's programs are loaded with: its Probe, and
// for ufunc a Go function too, whose entry and return probes are
// programs of their own (Go's moving stacks need them).
func probesOf(k tracing.Kind) []tracing.Config {
	probes := []tracing.Config{k.Probe}
	if k.Name == ufunc.Tracer.Name {
		if exe, err := os.Executable(); err == nil {
			// runtime.GC returns and is rarely called while the probes
			// are attached. Named from its value: the linker keeps it
			// only in a binary that refers to it (go run of a tool
			// dropped it).
			gc := runtime.FuncForPC(reflect.ValueOf(runtime.GC).Pointer()).Name()
			probes = append(probes, &ufunc.Config{Binary: exe, Symbols: []string{gc}})
		}
	}
	return probes
}

func loadCost(k tracing.Kind, probe tracing.Config, opts tracing.TracerOptions) (LoadCost, error) {
	t, err := k.New(probe, opts)
	if err != nil {
		return LoadCost{}, err
	}
	defer t.Close()
	lc, err := t.LoadCost()
	if err != nil {
		return LoadCost{}, fmt.Errorf("%s: %w", k.Name, err)
	}
	return LoadCost{Tracer: k.Name, Variant: t.Variant(), LoadCost: lc}, nil
}
