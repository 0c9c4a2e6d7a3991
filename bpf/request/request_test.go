package request

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
	"github.com/tailgate-ci/tailgate/internal/hist"
)

// newTracer loads the tracer for this whole process, in variant v.
func newTracer(t *testing.T, v tracing.Variant) *tracing.Tracer {
	t.Helper()
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func readServer(t *testing.T, tr *tracing.Tracer) *hist.Histogram {
	t.Helper()
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	return hs[MetricServer]
}

// serve answers each 64-byte request on c with 64 bytes after handler,
// until c closes; a request may come in parts, and the answer goes in
// two writes.
func serve(c net.Conn, handler time.Duration) {
	defer c.Close()
	buf := make([]byte, 64)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		time.Sleep(handler)
		if _, err := c.Write(buf[:16]); err != nil {
			return
		}
		if _, err := c.Write(buf[16:]); err != nil {
			return
		}
	}
}

// listen starts a Go server on loopback whose handler takes handler.
func listen(t *testing.T, handler time.Duration) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c, handler)
		}
	}()
	return ln
}

// ask sends n requests on c, each in two parts split by gap, and reads
// each answer.
func ask(t *testing.T, c net.Conn, n int, gap time.Duration) {
	t.Helper()
	req, ans := make([]byte, 64), make([]byte, 64)
	for range n {
		if _, err := c.Write(req[:10]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(gap)
		if _, err := c.Write(req[10:]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, ans); err != nil {
			t.Fatal(err)
		}
	}
}

// A Go server in this process, its client in this process too: each
// request counts once, from its first part's read to the answer's first
// write, so never below the gap between its parts plus the handler's
// sleep; the client's end, a pipe and the Go runtime's own fds count
// nothing.
func TestGoServerRequests(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			const handler, gap, n = 200 * time.Microsecond, 300 * time.Microsecond, 300
			tr := newTracer(t, v)
			ln := listen(t, handler)
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A pipe read and written back and forth: no socket.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			for range 100 {
				w.Write([]byte("x"))
				r.Read(make([]byte, 1))
			}
			ask(t, c, n, gap)
			// tp_btf works at the socket layer where the kernel has
			// it (this host's 6.18 has), raw_tp at the syscall exit.
			wantSock := v == tracing.TPBTF && tracing.HasTracepoint(nil, nil, SocketTracepoints[0])
			if got := tracingtest.ProgramNames(t, tr.ProgramIDs()); slices.Contains(got, "sock_recv_btf") != wantSock || slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "sys_exit") }) == wantSock {
				t.Errorf("programs %v; want the socket layer's: %v", got, wantSock)
			}
			wantHooks := []string{"sys_exit"}
			if wantSock {
				wantHooks = SocketTracepoints
			}
			if !slices.Equal(tr.Hooks(), wantHooks) {
				t.Errorf("hooks recorded %v, want %v", tr.Hooks(), wantHooks)
			}
			h := readServer(t, tr)
			if h.Count() != n {
				t.Errorf("counted %d requests, the client sent %d", h.Count(), n)
			}
			if min := time.Duration(h.Min()); min < handler+gap {
				t.Errorf("shortest request %v, below the %v its parts' gap and the handler take", min, handler+gap)
			}
			t.Logf("%d requests, p50 %v", h.Count(), time.Duration(h.Quantile(0.5)))
		})
	}
}

// A connection made before the tracer attached: the server's end is
// found by its first read (a socket), the client's end, first seen
// writing, counts nothing.
func TestConnectionBeforeAttach(t *testing.T) {
	const handler, n = 100 * time.Microsecond, 200
	ln := listen(t, handler)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask(t, c, 5, 0)
	tr := newTracer(t, tracing.TPBTF)
	ask(t, c, n, 0)
	h := readServer(t, tr)
	// The first request after attaching may have been read before it.
	if h.Count() < n-1 || h.Count() > n {
		t.Errorf("counted %d requests, the client sent %d", h.Count(), n)
	}
	if min := time.Duration(h.Min()); min < handler {
		t.Errorf("shortest request %v, below the handler's %v", min, handler)
	}
}

// Tracers loaded once serve many (tracing.Loaded), and a server's
// connections outlive them. A request read under one tracer and answered
// after it closed is no request of the next, which must not end what it
// did not open; the socket stays a server's, as the first tracer saw it,
// though the next sees it first answering; and the client's end stays a
// client's, though the next sees it first receiving.
func TestRequestOpenWhenTracerCloses(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			client, server := tcpPair(t)
			defer unix.Close(client)
			defer unix.Close(server)
			objs := tracing.NewLoaded()
			defer objs.Close()
			step := stepper(t)
			first := attachLoaded(t, objs, v)
			step(client, true)
			step(server, false) // opened under the first tracer
			first.Close()
			if err := objs.Detach(); err != nil {
				t.Fatal(err)
			}
			const gap = 100 * time.Millisecond
			time.Sleep(gap)
			next := attachLoaded(t, objs, v)
			defer next.Close()
			step(server, true) // its answer, under the next
			step(client, false)
			checkRequests(t, next, step, client, server, gap)
		})
	}
}

// An fd closed while no tracer was attached and opened again as another
// socket is that socket to the next tracer: a server's fd that comes back
// as a client's end counts nothing.
func TestFdReusedBetweenTracers(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			client, server := tcpPair(t)
			defer unix.Close(client)
			objs := tracing.NewLoaded()
			defer objs.Close()
			step := stepper(t)
			first := attachLoaded(t, objs, v)
			step(client, true)
			step(server, false)
			step(server, true)
			step(client, false)
			first.Close()
			if err := objs.Detach(); err != nil {
				t.Fatal(err)
			}
			// Unseen: the server's end closes and its fd comes back as a
			// client's end of another connection.
			ln, sa := listener(t)
			defer unix.Close(ln)
			reused := server
			unix.Close(server)
			client2, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(client2)
			if err := unix.Connect(client2, sa); err != nil {
				t.Fatal(err)
			}
			server2, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(server2)
			if client2 != reused {
				t.Fatalf("the new client's end is fd %d, not the closed server's %d", client2, reused)
			}
			next := attachLoaded(t, objs, v)
			defer next.Close()
			checkRequests(t, next, step, client2, server2, time.Second)
		})
	}
}

// attachLoaded attaches the tracer for this process from objs, in variant v.
func attachLoaded(t *testing.T, objs *tracing.Loaded, v tracing.Variant) *tracing.Tracer {
	t.Helper()
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Loaded: objs}, Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// stepper returns a step: a 64-byte write to fd, or a read of 64 bytes.
func stepper(t *testing.T) func(fd int, write bool) {
	buf := make([]byte, 64)
	return func(fd int, write bool) {
		t.Helper()
		var err error
		if write {
			_, err = unix.Write(fd, buf)
		} else {
			_, err = io.ReadFull(fdReader(fd), buf)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkRequests makes 3 requests from client to server, whose handler
// takes 2 ms, and checks that tr counts those 3, each 2 ms to most. A
// client's end taken for a server's would count the time between its
// read and its next write: under 2 ms.
func checkRequests(t *testing.T, tr *tracing.Tracer, step func(int, bool), client, server int, most time.Duration) {
	t.Helper()
	const handler = 2 * time.Millisecond
	for range 3 {
		step(client, true)
		step(server, false)
		time.Sleep(handler)
		step(server, true)
		step(client, false)
	}
	h := readServer(t, tr)
	if min, max := time.Duration(h.Min()), time.Duration(h.Max()); h.Count() != 3 || min < handler || max >= most {
		t.Errorf("counted %d requests, %v to %v: want the 3 made, each %v to %v", h.Count(), min, max, handler, most)
	}
}

// fdReader reads a file descriptor.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) { return unix.Read(int(f), p) }

// With queue, a request's data's wait before the read that opens it is
// request.queue: the server reads each request 3 ms after the client sent
// it, so each waits 3 ms or more, and its time in the server is apart
// from that. The first request, whose data came before the socket was
// first seen, has none. At the syscall tracepoint it is refused.
func TestRequestQueue(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Variant: tracing.RawTP, Queue: true}); !errors.Is(err, ErrNoQueue) {
		t.Errorf("queue at the syscall tracepoint: %v, want %v", err, ErrNoQueue)
	}
	client, server := tcpPair(t)
	defer unix.Close(client)
	defer unix.Close(server)
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Variant: tracing.TPBTF, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if got := tr.Metrics(); !slices.Equal(got, Metrics) {
		t.Errorf("metrics %q, want %q", got, Metrics)
	}
	step := stepper(t)
	const wait, n = 3 * time.Millisecond, 5
	var waited time.Duration // from each send's end to its read's end
	for i := range n + 1 {
		step(client, true)
		sent := time.Now()
		if i > 0 {
			time.Sleep(wait)
		}
		step(server, false)
		if i > 0 {
			waited += time.Since(sent)
		}
		step(server, true)
		step(client, false)
	}
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	q, s := hs[MetricQueue], hs[MetricServer]
	// Each wait lies inside what this thread saw of it, but for the end
	// of the send after the data arrived: a wait counted from an earlier
	// request's data would add up to more.
	sum := time.Duration(q.Mean() * float64(q.Count()))
	if min := time.Duration(q.Min()); q.Count() != n || min < wait || sum > waited+n*100*time.Microsecond {
		t.Errorf("request.queue: %d waits, from %v, %v in all; want %d, each %v or more, %v in all at most", q.Count(), min, sum, n, wait, waited)
	}
	if s.Count() != n+1 || time.Duration(s.Quantile(0.5)) >= wait {
		t.Errorf("request.server: %d requests, p50 %v; want %d, a read to its answer well under %v", s.Count(), time.Duration(s.Quantile(0.5)), n+1, wait)
	}
}
