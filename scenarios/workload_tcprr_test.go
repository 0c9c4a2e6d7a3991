//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newTCPRR prepares a tcp-rr workload through NewWorkload, and returns its
// load too.
func newTCPRR(t *testing.T, pairs int, p TCPRR) (*tcpRRLoad, Runner) {
	t.Helper()
	r, err := NewWorkload(Workload{Kind: "tcp-rr", Pairs: pairs, Params: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*runner).load.(*tcpRRLoad), r
}

func TestTCPRR(t *testing.T) {
	tests := []struct {
		name  string
		pairs int
		p     TCPRR
	}{
		{"defaults", 0, TCPRR{}},
		{"64 B request, 4 KiB response", 1, TCPRR{Request: 64, Response: 4096}},
		{"1 MiB each way", 1, TCPRR{Request: 1 << 20, Response: 1 << 20}},
		{"2 pairs", 2, TCPRR{Request: 32, Response: 32}},
		{"nagle", 1, TCPRR{Request: 100, Response: 100, Nagle: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			procs := runtime.GOMAXPROCS(0)
			_, r := newTCPRR(t, tt.pairs, tt.p)
			p, pairs := tt.p.withDefaults(), max(tt.pairs, DefaultPairs)
			small := p.Request <= 4096 && p.Response <= 4096
			// Twice: the second run must count only itself and find the
			// connections as the first left them, at a message boundary.
			for i := range 2 {
				start := time.Now()
				st := runFor(t, r, 200*time.Millisecond)
				if took := time.Since(start); took > time.Second {
					t.Errorf("run %d took %v", i, took)
				}
				if st.Ops == 0 {
					t.Fatalf("run %d: no round trips; stats %+v", i, st)
				}
				h := st.Metrics[MetricTCPRR]
				if h == nil || h.Count() != st.Ops {
					t.Fatalf("run %d: %d round trips, %s histogram %v", i, st.Ops, MetricTCPRR, h)
				}
				if p50 := h.Quantile(0.5); p50 < 1000 || p50 > 50e6 {
					t.Errorf("run %d: %s p50 %.0f ns is not a loopback round trip", i, MetricTCPRR, p50)
				}
				// Each round trip is a request and a response, each one
				// write and one read when it fits the socket buffers; each
				// pair's last request (the stop) is not a round trip counted.
				calls := 2 * (st.Ops + uint64(pairs))
				for _, sc := range []string{"read", "write"} {
					if n := st.Syscalls[sc]; n < calls || small && n != calls {
						t.Errorf("run %d: %d %s calls for %d round trips over %d pairs, want %d", i, n, sc, st.Ops, pairs, calls)
					}
				}
				if ncpu := onlineCPUs(t); ncpu > 1 && len(st.CPUs) != min(ncpu, 2*pairs) {
					t.Errorf("run %d: threads on CPUs %v, want %d", i, st.CPUs, min(ncpu, 2*pairs))
				}
				t.Logf("run %d: %d round trips, p50 %.1f µs, p99 %.1f µs, syscalls %v", i, st.Ops, h.Quantile(0.5)/1e3, h.Quantile(0.99)/1e3, st.Syscalls)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(context.Background()); !errors.Is(err, ErrClosed) {
				t.Errorf("Run after Close: %v, want ErrClosed", err)
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Errorf("GOMAXPROCS %d after the runs, %d before", got, procs)
			}
			checkGoroutines(t, before)
		})
	}
}

func onlineCPUs(t *testing.T) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	return set.Count()
}

// TestTCPRRThreadHook: both threads of every pair are the workload's, told
// to the hook as they start and end.
func TestTCPRRThreadHook(t *testing.T) {
	const pairs = 2
	_, r := newTCPRR(t, pairs, TCPRR{})
	var mu sync.Mutex
	running := map[int]bool{}
	var started, ended []int
	hook := func(tid int, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			started = append(started, tid)
		} else {
			ended = append(ended, tid)
		}
		running[tid] = on
	}
	ctx, cancel := context.WithTimeout(WithThreadHook(context.Background(), hook), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(started)
	slices.Sort(ended)
	if len(started) != 2*pairs || !slices.Equal(started, ended) {
		t.Errorf("hook: started %v, ended %v; want %d threads, each started and ended", started, ended, 2*pairs)
	}
	for tid, on := range running {
		if on {
			t.Errorf("thread %d still running after Run returned", tid)
		}
	}
}

// TestTCPRRCancel: a run ends soon after its context does, and a
// connection that broke during a run fails that run and is made anew for
// the next.
func TestTCPRRCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	l, r := newTCPRR(t, 1, TCPRR{Request: 64, Response: 64})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start) - 100*time.Millisecond; took > 200*time.Millisecond {
		t.Errorf("Run returned %v after the cancel", took)
	}

	// The server's end is shut down under it: both threads fail, fast.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	server := l.pairs[0].server
	time.AfterFunc(50*time.Millisecond, func() { unix.Shutdown(server, unix.SHUT_RDWR) })
	start = time.Now()
	_, err := r.Run(ctx)
	if err == nil || !errors.Is(err, errPeerClosed) && !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		t.Errorf("Run over a connection shut down: %v, want a closed connection", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Run over a broken connection took %v", took)
	}
	st := runFor(t, r, 100*time.Millisecond)
	if st.Ops == 0 {
		t.Errorf("no round trips after the broken connection was made anew")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkGoroutines(t, before)
}

// TestTCPRRWithNoise: CPU hogs beside the pairs, as any kind may have.
func TestTCPRRWithNoise(t *testing.T) {
	before := runtime.NumGoroutine()
	r, err := NewWorkload(Workload{Kind: "tcp-rr", Noise: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := runFor(t, r, 200*time.Millisecond)
	if h := st.Metrics[MetricTCPRR]; st.Ops == 0 || h == nil || h.Count() != st.Ops {
		t.Errorf("%d round trips, %s histogram %v", st.Ops, MetricTCPRR, h)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkGoroutines(t, before)
}
