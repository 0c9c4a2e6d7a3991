package tcp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/tailgate-ci/tailgate/bpf/tcp"
	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// TestBuiltinScenarios runs one trial of each built-in tcp-rr scenario
// with all its tracers, attached from the registry as the runner does:
// every metric the scenario declares is measured; tcp.rr counts the
// client's round trips and the net tracer two events for each (and for
// each pair's last); in tcp-rr-small, the softirq-heavy one, the NET_RX
// softirqs run at least once for every two messages (loopback raises one
// per message, and a softirq may take several).
func TestBuiltinScenarios(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	cache := btf.NewCache()
	for _, name := range []string{"tcp-rr", "tcp-rr-small"} {
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var ts []*tracing.Tracer
			defer func() {
				for _, tr := range ts {
					tr.Close()
				}
			}()
			for _, k := range tracers.All {
				c := s.Tracers[k.Name]
				if c == nil {
					continue
				}
				tr, err := k.New(c, tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, BTF: cache})
				if err != nil {
					t.Fatalf("tracer %s: %v", k.Name, err)
				}
				ts = append(ts, tr)
			}
			r, err := scenarios.NewWorkload(s.Workload)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			hook := tracingtest.ThreadHook(t, ts...)
			ctx := scenarios.WithThreadHook(context.Background(), hook)
			var st scenarios.Stats
			for _, d := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond} { // warmup, trial
				for _, tr := range ts {
					if err := tr.Reset(); err != nil {
						t.Fatal(err)
					}
				}
				rctx, cancel := context.WithTimeout(ctx, d)
				st, err = r.Run(rctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
			}
			got := map[string]*hist.Histogram{}
			var missed uint64
			for _, tr := range ts {
				hs, err := tr.Read()
				if err != nil {
					t.Fatal(err)
				}
				for m, h := range hs {
					got[m] = h
				}
				if tr.Name() == tcp.Tracer.Name {
					if missed, err = tr.Missed(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for m, h := range st.Metrics {
				got[m] = h
			}
			for _, m := range scenarios.Metrics(s) {
				if got[m] == nil {
					t.Errorf("%s declared but not measured", m)
				}
			}
			if n := got[scenarios.MetricTCPRR].Count(); n != st.Ops || n == 0 {
				t.Errorf("%s counted %d, want the client's %d round trips", scenarios.MetricTCPRR, n, st.Ops)
			}
			want := 2 * (st.Ops + uint64(s.Workload.Pairs))
			for _, m := range tcp.Metrics {
				if n := got[m].Count(); n+missed != want {
					t.Errorf("%s counted %d (missed %d), want %d for %d round trips over %d pairs", m, n, missed, want, st.Ops, s.Workload.Pairs)
				}
			}
			if h := got["softirq.net_rx.latency"]; h != nil {
				if n := h.Count(); n < want/2 {
					t.Errorf("softirq.net_rx.latency counted %d softirqs for %d loopback messages, want at least one for every two", n, want)
				}
				t.Logf("NET_RX softirqs %d for %d messages; p50 %.0f ns, p99 %.0f ns", h.Count(), want, h.Quantile(0.5), h.Quantile(0.99))
			}
			for _, m := range scenarios.Metrics(s) {
				if h := got[m]; h != nil && h.Count() > 0 {
					t.Logf("%s: n=%d p50 %.2f µs p99 %.2f µs", m, h.Count(), h.Quantile(0.5)/1e3, h.Quantile(0.99)/1e3)
				}
			}
		})
	}
}
