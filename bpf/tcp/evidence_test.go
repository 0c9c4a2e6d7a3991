package tcp

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/symbols"
)

// TestEvidenceCatchesLateReads: among many round trips, a few requests the
// server reads only after a sleep are the slowest net.tcp.rcvq events, with
// the server thread as the reader and recvmsg on its kernel stack; the
// slowest net.tcp.deliver events come with the task whose context delivered
// them and TCP input on the stack.
func TestEvidenceCatchesLateReads(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			// 50 ms stands well above the few ms a reader of this shared
			// machine waits now and then anyway.
			const k, slow, delay = 5, 3, 50 * time.Millisecond
			tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Evidence: k}, Variant: v})
			c := dial(t)
			rr(t, c, 2000, 64, 64, nil)
			var server int
			done := make(chan error)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				server = unix.Gettid()
				b := make([]byte, 64)
				for range slow {
					time.Sleep(delay) // the request waits in the queue
					if err := full(c.server, b, false); err != nil {
						done <- err
						return
					}
					if err := full(c.server, b, true); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			b := make([]byte, 64)
			for range slow {
				if err := full(c.client, b, true); err != nil {
					t.Fatal(err)
				}
				if err := full(c.client, b, false); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			evs, dropped, err := tr.Evidence()
			if err != nil {
				t.Fatal(err)
			}
			sym := symbols.NewSymbolizer()
			got := evs[MetricRcvq]
			if len(got) != k {
				t.Fatalf("%d events of %s, want %d (dropped %d)", len(got), MetricRcvq, k, dropped)
			}
			for i, e := range got[:slow] {
				if e.Latency < uint64(delay*3/4) {
					t.Errorf("%s event %d of %d ns, want the %d requests read ≥%v late", MetricRcvq, i, e.Latency, slow, delay*3/4)
				}
				if e.TID != uint32(server) || e.PID != uint32(os.Getpid()) {
					t.Errorf("%s event of tid %d pid %d, want the server thread %d of %d", MetricRcvq, e.TID, e.PID, server, os.Getpid())
				}
				if frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " "); !strings.Contains(frames, "tcp_recvmsg") {
					t.Errorf("%s kernel stack %q has no tcp_recvmsg", MetricRcvq, frames)
				}
			}
			del := evs[MetricDeliver]
			if len(del) != k {
				t.Fatalf("%d events of %s, want %d (dropped %d)", len(del), MetricDeliver, k, dropped)
			}
			for i, e := range del {
				if i > 0 && e.Latency > del[i-1].Latency {
					t.Errorf("%s events not slowest first: %d then %d ns", MetricDeliver, del[i-1].Latency, e.Latency)
				}
				if frames := strings.Join(sym.Frames(e.KernelStack, false, 0), " "); !strings.Contains(frames, "tcp_rcv_established") {
					t.Errorf("%s kernel stack %q has no tcp_rcv_established", MetricDeliver, frames)
				}
			}
		})
	}
}
