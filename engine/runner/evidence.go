package runner

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// topContributors is how many contributors of an event's interference the
// Result keeps.
const topContributors = 4

// loadInterference loads the interference log (tracers.Interference) for a
// scenario whose tracers keep evidence; nil when they keep none. A kernel
// that cannot load it (bpf_loop is 5.17's) runs without: its events then
// carry no interference.
func loadInterference(s *scenarios.Scenario, kb kernelBTF) (tracing.InterferenceLog, error) {
	if s.Evidence == 0 || len(s.Tracers) == 0 {
		return nil, nil
	}
	l, err := tracers.LoadInterference(tracing.TracerOptions{BTF: kb.cache, KernelTypes: kb.types, Loaded: kb.loaded})
	if errors.Is(err, ebpf.ErrNotSupported) {
		return nil, nil
	}
	if err != nil {
		return nil, newAttachError(tracers.Interference.Name, err)
	}
	return l, nil
}

// interference converts an event's interference to the Result's.
func interference(in *tracing.Interference) *result.Interference {
	if in == nil {
		return nil
	}
	out := &result.Interference{HardirqNs: in.HardirqNs, SoftirqNs: in.SoftirqNs, TasksNs: in.TaskNs, Partial: in.Partial}
	for _, c := range in.Top[:min(len(in.Top), topContributors)] {
		rc := result.Contributor{Kind: c.Kind, Name: c.Name, Ns: c.Ns}
		if c.Kind == "task" {
			rc.TID = int(c.ID)
		}
		out.Top = append(out.Top, rc)
	}
	return out
}

// slowest converts a tracer's evidence to the Result's events, naming the
// stacks' addresses here, where they are valid (in a guest, with the
// guest's kernel symbols).
func slowest(sym *symbols.Symbolizer, evs []tracing.Event) []result.Event {
	if len(evs) == 0 {
		return nil
	}
	out := make([]result.Event, 0, len(evs))
	for _, e := range evs {
		re := result.Event{
			LatencyNs:    e.Latency,
			AtNs:         e.End,
			CPU:          int(e.CPU),
			Comm:         e.Comm,
			PID:          int(e.PID),
			TID:          int(e.TID),
			KernelStack:  symbols.TrimTracing(sym.KernelStack(e.KernelStack)),
			UserStack:    sym.Frames(e.UserStack, true, e.PID),
			Interference: interference(e.Interference),
		}
		if e.OtherComm != "" || e.OtherTID != 0 {
			re.Other = &result.Task{Comm: e.OtherComm, TID: int(e.OtherTID), Prio: int(e.OtherPrio)}
		}
		out = append(out, re)
	}
	return out
}

// profileQuantile is the percentile whose requests a trial's profile
// samples: the smallest the scenario gates of metric, p99 when it gates
// none below max (max itself is one request a trial).
func profileQuantile(gate result.GatePolicy, metric string) float64 {
	ps, ok := gate[metric]
	if !ok {
		ps = gate["*"]
	}
	q := 1.0
	for p := range ps {
		if v, ok := hist.ParsePercentile(p); ok && v < q {
			q = v
		}
	}
	if q >= 1 {
		q = 0.99
	}
	return q
}

// profile keeps the samples of the requests slower than the trial's q
// quantile of h, their stacks named by sym and counted by stack.
func profile(sym *symbols.Symbolizer, reqs []tracing.SampledRequest, dropped uint64, h *hist.Histogram, q float64) *result.Profile {
	threshold := uint64(h.Quantile(q))
	p := &result.Profile{Quantile: q, ThresholdNs: threshold, PeriodNs: tracing.SamplePeriod, Dropped: dropped}
	at := map[string]int{} // a stack's index in p.Samples, by its addresses
	for _, r := range reqs {
		if r.Latency < threshold {
			continue
		}
		p.Requests++
		for _, st := range r.Stacks {
			key := fmt.Sprint(r.PID, st.Kernel, st.User)
			if i, ok := at[key]; ok {
				p.Samples[i].Count++
				continue
			}
			at[key] = len(p.Samples)
			p.Samples = append(p.Samples, result.StackSample{
				Kernel: symbols.TrimTracing(sym.KernelStack(st.Kernel)),
				User:   sym.Frames(st.User, true, r.PID),
				PID:    int(r.PID),
				Count:  1,
			})
		}
	}
	return p
}

// addEvidence attaches a tracer's trial evidence and loss counts to the
// last trial of each of its metrics in sr, and its stack samples to its
// first metric's.
func addEvidence(sr *result.Scenario, sym *symbols.Symbolizer, t *tracing.Tracer) error {
	reqs, sdropped, err := t.Samples()
	if err != nil {
		return err
	}
	evs, dropped, err := t.Evidence()
	if err != nil {
		return err
	}
	missed, err := t.Missed()
	if err != nil {
		return err
	}
	for _, m := range t.Metrics() {
		rm := sr.Metrics[m]
		if rm == nil || len(rm.Trials) == 0 {
			continue
		}
		tr := &rm.Trials[len(rm.Trials)-1]
		tr.Slowest = slowest(sym, evs[m])
		tr.Missed = missed
		tr.EvidenceDropped = dropped
		if m == t.Metrics()[0] && (reqs != nil || sdropped > 0) && tr.Histogram != nil {
			tr.Profile = profile(sym, reqs, sdropped, tr.Histogram, profileQuantile(sr.Gate, m))
		}
	}
	return nil
}
