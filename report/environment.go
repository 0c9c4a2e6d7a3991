package report

import (
	"fmt"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// environmentWarnings warns of each way the two runs' environments and
// targets differ, of the tailgates that wrote them (a release may measure
// a metric another way), of a partial run, and of timings emulated under
// TCG.
func environmentWarnings(base, cand *result.Result) []stats.Warning {
	var w []stats.Warning
	diff := func(field, b, c string) {
		if b != c {
			w = append(w, stats.Warning{Kind: WarnEnvironment, Field: field, Base: b, Cand: c})
		}
	}
	be, ce := base.Environment, cand.Environment
	diff(stats.FieldKernelRelease, be.KernelRelease, ce.KernelRelease)
	diff(stats.FieldConfigHash, be.ConfigHash, ce.ConfigHash)
	diff(stats.FieldCPUModel, be.CPUModel, ce.CPUModel)
	diff(stats.FieldCPUs, fmt.Sprint(be.CPUs), fmt.Sprint(ce.CPUs))
	bt, ct := base.Target, cand.Target
	diff(stats.FieldAccel, bt.Accel, ct.Accel)
	diff(stats.FieldKind, bt.Kind, ct.Kind)
	diff(stats.FieldVCPUs, fmt.Sprint(bt.VCPUs), fmt.Sprint(ct.VCPUs))
	diff(stats.FieldMemMiB, fmt.Sprint(bt.MemMiB), fmt.Sprint(ct.MemMiB))
	diff(stats.FieldCmdline, bt.Cmdline, ct.Cmdline)
	diff(stats.FieldTailgate, versionText(base.Tailgate), versionText(cand.Tailgate))
	for _, s := range []struct {
		side stats.Role
		r    *result.Result
	}{{stats.Baseline, base}, {stats.Candidate, cand}} {
		if s.r.Partial {
			w = append(w, stats.Warning{Kind: WarnPartial, Side: s.side, Detail: s.r.Error})
		}
		if s.r.Target.Accel == "tcg" && !s.r.Target.Virtual() {
			w = append(w, stats.Warning{Kind: WarnEmulated, Side: s.side})
		}
	}
	// Both or neither: checkClocks refuses one of each.
	if bt.Virtual() {
		w = append(w, stats.Warning{Kind: WarnVirtualTime, Side: stats.Both, Detail: fmt.Sprint(bt.Shift())})
	}
	return w
}

// versionText names the tailgate that wrote a Result: its version, and
// its commit when known.
func versionText(v result.Version) string {
	if v.Commit == "" {
		return v.Version
	}
	return v.Version + " (" + v.Commit + ")"
}
