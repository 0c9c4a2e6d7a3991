package report

import (
	"math"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
)

func sampled(ss ...result.StackSample) *result.Result {
	return &result.Result{Scenarios: []result.Scenario{{
		Name: "srv",
		Metrics: map[string]*result.Metric{"request.server": {Trials: []result.Trial{
			{Profile: &result.Profile{Quantile: 0.99, PeriodNs: 250000, Samples: ss[:len(ss)/2]}},
			{Profile: &result.Profile{Quantile: 0.99, PeriodNs: 250000, Samples: ss[len(ss)/2:]}},
		}}},
	}}}
}

// Frames are ranked by how much their self share grew, offsets dropped,
// kernel frames told apart from user ones of the same name; a frame that
// grew by less than a point, or shrank, is not named.
func TestGrownFrames(t *testing.T) {
	base := sampled(
		result.StackSample{Kernel: []string{"tcp_sendmsg+0x10"}, User: []string{"__write+0x4f"}, Count: 60},
		result.StackSample{User: []string{"handle+0x5d", "serve+0x20"}, Count: 20},
		result.StackSample{User: []string{"serve+0x30"}, Count: 20},
	)
	cand := sampled(
		result.StackSample{Kernel: []string{"tcp_sendmsg+0x18"}, User: []string{"__write+0x4f"}, Count: 30},
		result.StackSample{User: []string{"__vdso_clock_gettime+0x36", "clock_gettime+0x19"}, Count: 100},
		result.StackSample{User: []string{"__vdso_clock_gettime+0x52"}, Count: 20},
		result.StackSample{User: []string{"handle+0x60"}, Count: 40},
		result.StackSample{User: []string{"serve+0x30"}, Count: 10},
	)
	g := GrownFrames(base, cand, "srv", "request.server", 3)
	if g.BaseSamples != 100 || g.CandSamples != 200 || g.Quantile != 0.99 {
		t.Fatalf("samples %d, %d at q %v; want 100, 200 at 0.99", g.BaseSamples, g.CandSamples, g.Quantile)
	}
	want := []FrameShare{{Function: "__vdso_clock_gettime", Base: 0, Cand: 0.6}}
	if len(g.Frames) != 1 || g.Frames[0].Function != want[0].Function || g.Frames[0].Kernel ||
		math.Abs(g.Frames[0].Cand-0.6) > 1e-9 || g.Frames[0].Base != 0 {
		// handle: 20% → 20%, no growth; tcp_sendmsg and serve shrank.
		t.Fatalf("grown %+v, want %+v alone", g.Frames, want)
	}

	// Two that grew, in order, and the limit.
	cand = sampled(
		result.StackSample{Kernel: []string{"tcp_sendmsg+0x18"}, Count: 50},
		result.StackSample{User: []string{"tcp_sendmsg+0x1"}, Count: 10}, // a user function of a kernel name
		result.StackSample{User: []string{"handle+0x60"}, Count: 40},
	)
	g = GrownFrames(base, cand, "srv", "request.server", 1)
	if len(g.Frames) != 1 || g.Frames[0].Function != "handle" || math.Abs(g.Frames[0].Growth()-0.2) > 1e-9 {
		t.Errorf("top of 1: %+v, want handle +20 points (tcp_sendmsg in the kernel -10, in user space +10)", g.Frames)
	}
	g = GrownFrames(base, cand, "srv", "request.server", 3)
	if len(g.Frames) != 2 || g.Frames[1].Function != "tcp_sendmsg" || g.Frames[1].Kernel {
		t.Errorf("top of 3: %+v, want handle then tcp_sendmsg of user space", g.Frames)
	}

	// No samples on a side: counted, nothing named.
	if g := GrownFrames(&result.Result{}, cand, "srv", "request.server", 3); g.BaseSamples != 0 || g.CandSamples != 100 || g.Frames != nil {
		t.Errorf("no baseline samples: %+v", g)
	}
}
