package doctor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// SlowLoad is the load time past which doctor says what a tracer's load
// costs a run.
const SlowLoad = 500 * time.Millisecond

// Tracers loads each tracer of the registry with its Probe config as a
// run loads it: the kernel's BTF decoded once and shared, the evidence a
// scenario keeps by default, and the interference log that goes with
// it. It words a check of each, and of each slow load.
func Tracers() []Check {
	cache := btf.NewCache()
	_, _ = cache.Kernel() // decoded once for all, as in a run; a failure shows in each load
	opts := tracing.TracerOptions{TGID: uint32(os.Getpid()), BTF: cache, Evidence: scenarios.DefaultEvidence, VerifierStats: true}
	var cs []Check
	// A run with evidence loads the log first, and fails without it
	// unless the kernel lacks what it needs (as runner.loadInterference).
	ilog, err := tracers.LoadInterference(tracing.TracerOptions{BTF: cache})
	switch {
	case err == nil:
		defer ilog.Close()
		opts.Interference = ilog.Map()
	case !errors.Is(err, ebpf.ErrNotSupported):
		cs = append(cs, Check{Name: "interference log", Detail: err.Error(), Need: NeedHost})
	}
	for _, k := range tracers.All {
		name := k.Name + " tracer"
		t, err := k.New(k.Probe, opts)
		switch {
		case errors.Is(err, ebpf.ErrNotSupported):
			// A tracer this kernel cannot load at all (kfunc without
			// fentry or kprobes) fails only the scenarios that use it;
			// runs of every built-in pass over them.
			cs = append(cs, Check{Name: name, Detail: err.Error(), Need: "scenarios using it"})
		case err != nil:
			cs = append(cs, Check{Name: name, Detail: err.Error(), Need: NeedHost})
		default:
			lc, err := t.LoadCost()
			t.Close()
			if err != nil {
				cs = append(cs, Check{Name: name, Detail: err.Error(), Need: NeedHost})
				continue
			}
			cs = append(cs, TracerLoaded(k.Name, t.Variant(), lc)...)
		}
	}
	return cs
}

// TracerLoaded words the check of tracer name, loaded as variant v at
// cost c, and, for a load slower than SlowLoad, a warning of its own
// that says what it costs a run and which program the verifier spent
// the most on.
func TracerLoaded(name string, v tracing.Variant, c tracing.LoadCost) []Check {
	cs := []Check{{Name: name + " tracer", OK: true, Need: NeedHost,
		Detail: fmt.Sprintf("loads in %s and attaches (%s)", seconds(c.Took), v)}}
	if c.Took <= SlowLoad {
		return cs
	}
	why := ""
	if p, ok := c.Slowest(); ok {
		insns := strconv.FormatUint(uint64(p.Insns), 10) + " instructions"
		if p.Verify > 0 {
			why = fmt.Sprintf(", %s of it verifying %s (%s)", seconds(p.Verify), p.Program, insns)
		} else {
			why = fmt.Sprintf("; the verifier spent the most on %s (%s)", p.Program, insns)
		}
	}
	return append(cs, Check{Name: name + " load", Need: "fast runs",
		Detail: fmt.Sprintf("%s to load%s: every run that attaches the %s tracer pays it once", seconds(c.Took), why, name)})
}

// seconds words d as ms below a second, else as s.
func seconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
