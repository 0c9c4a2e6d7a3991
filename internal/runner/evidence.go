package runner

import (
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// slowest converts a tracer's evidence to the Result's events, naming the
// stacks' addresses here, where they are valid (in a guest, with the
// guest's kernel symbols).
func slowest(sym *tracing.Symbolizer, evs []tracing.Event) []result.Event {
	if len(evs) == 0 {
		return nil
	}
	out := make([]result.Event, 0, len(evs))
	for _, e := range evs {
		re := result.Event{
			LatencyNs:   e.Latency,
			AtNs:        e.End,
			CPU:         int(e.CPU),
			Comm:        e.Comm,
			PID:         int(e.PID),
			TID:         int(e.TID),
			KernelStack: trimTracing(sym.Frames(e.KernelStack, false, e.PID)),
			UserStack:   sym.Frames(e.UserStack, true, e.PID),
		}
		if e.OtherComm != "" || e.OtherTID != 0 {
			re.Other = &result.Task{Comm: e.OtherComm, TID: int(e.OtherTID), Prio: int(e.OtherPrio)}
		}
		out = append(out, re)
	}
	return out
}

// addEvidence attaches a tracer's trial evidence and loss counts to the
// last trial of each of its metrics in sr.
func addEvidence(sr *result.Scenario, sym *tracing.Symbolizer, t *tracing.Tracer) error {
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
	}
	return nil
}

// tracingFrames begin the frames of the tracer itself: a stack taken in a
// BPF program starts with the program and the tracepoint's glue.
var tracingFrames = []string{"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_trampoline_"}

// trimTracing drops the leading frames of the tracing machinery.
func trimTracing(frames []string) []string {
	for len(frames) > 0 {
		tracing := false
		for _, p := range tracingFrames {
			if strings.HasPrefix(frames[0], p) {
				tracing = true
				break
			}
		}
		if !tracing {
			break
		}
		frames = frames[1:]
	}
	return frames
}
