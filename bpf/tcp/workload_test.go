package tcp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/tcp"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestTCPRRWorkload runs the tcp-rr workload as a trial does: the tracer
// counts only the threads the workload registers through its ThreadHook.
// Every round trip is a request and a response, each one segment
// delivered and read once, and each pair's run ends with one more round
// trip that tcp.rr does not count (the client's last request): so each
// metric counts 2 × (round trips + pairs), and tcp.rr the round trips.
func TestTCPRRWorkload(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		w    scenarios.Workload
	}{
		{"tcp-rr", scenarios.Workload{Kind: "tcp-rr", Params: &scenarios.TCPRR{Request: 64, Response: 4096}}},
		{"tcp-rr-small", scenarios.Workload{Kind: "tcp-rr", Pairs: 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := tcp.New(tcp.Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			r, err := scenarios.NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			hook := tracingtest.ThreadHook(t, tr)
			ctx := scenarios.WithThreadHook(context.Background(), hook)
			// A warmup, as a trial has: the sockets are made before the
			// tracer sees them and become the workload's at their first
			// read, so its counts are a round trip short.
			for i, d := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond} {
				if err := tr.Reset(); err != nil {
					t.Fatal(err)
				}
				rctx, cancel := context.WithTimeout(ctx, d)
				st, err := r.Run(rctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					continue
				}
				hs, err := tr.Read()
				if err != nil {
					t.Fatal(err)
				}
				missed, err := tr.Missed()
				if err != nil {
					t.Fatal(err)
				}
				pairs := uint64(max(tt.w.Pairs, 1))
				want := 2 * (st.Ops + pairs)
				if n := st.Metrics[scenarios.MetricTCPRR].Count(); n != st.Ops || n == 0 {
					t.Errorf("%s counted %d, want the client's %d round trips", scenarios.MetricTCPRR, n, st.Ops)
				}
				for _, m := range tcp.Metrics {
					h := hs[m]
					if n := h.Count(); n+missed != want {
						t.Errorf("%s counted %d (missed %d), want %d: 2 per round trip of %d and per pair's last", m, n, missed, want, st.Ops)
					}
					// Plausible: above the clock's resolution, below the
					// round trip that contains it (at the median).
					rtt := st.Metrics[scenarios.MetricTCPRR].Quantile(0.5)
					if p50 := h.Quantile(0.5); p50 < 100 || p50 >= rtt {
						t.Errorf("%s p50 %.0f ns: not within a round trip's %.0f ns", m, p50, rtt)
					}
					t.Logf("%s: n=%d p50 %.2f µs p99 %.2f µs", m, h.Count(), h.Quantile(0.5)/1e3, h.Quantile(0.99)/1e3)
				}
				t.Logf("%s: n=%d p50 %.2f µs", scenarios.MetricTCPRR, st.Ops, st.Metrics[scenarios.MetricTCPRR].Quantile(0.5)/1e3)
			}
		})
	}
}
