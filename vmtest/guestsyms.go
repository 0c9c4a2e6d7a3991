package vmtest

import (
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// systemMap reads k's System.map, nil when the kernel has none (a local
// image, or a kernel cached before it was kept) or it cannot be read: the
// guest then names its stacks itself.
func systemMap(k *Kernel) *tracing.SystemMap {
	if k == nil || k.SystemMap == "" {
		return nil
	}
	m, err := tracing.ReadSystemMap(k.SystemMap)
	if err != nil {
		return nil
	}
	return m
}

// nameGuestFrames names the kernel frames a guest left as hex
// (GuestRequest.KernelText) from its kernel's System.map, then drops the
// leading frames of the tracing machinery, as a host run does.
func nameGuestFrames(res *result.Result, m *tracing.SystemMap) {
	if res == nil || m == nil {
		return
	}
	for si := range res.Scenarios {
		for _, rm := range res.Scenarios[si].Metrics {
			for ti := range rm.Trials {
				for ei := range rm.Trials[ti].Slowest {
					e := &rm.Trials[ti].Slowest[ei]
					for i, f := range e.KernelStack {
						e.KernelStack[i] = m.Name(f)
					}
					e.KernelStack = tracing.TrimTracing(e.KernelStack)
				}
			}
		}
	}
}
