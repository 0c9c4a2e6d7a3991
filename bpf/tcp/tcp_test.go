package tcp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// conn is one loopback TCP connection: the client's end and the server's.
type conn struct{ client, server int }

// dial makes a loopback TCP connection with TCP_NODELAY on both ends.
func dial(t testing.TB) *conn {
	t.Helper()
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ln)
	lo := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(ln, lo); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(ln, 1); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		t.Fatal(err)
	}
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(c, sa); err != nil {
		t.Fatal(err)
	}
	s, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range []int{c, s} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			t.Fatal(err)
		}
	}
	cn := &conn{client: c, server: s}
	t.Cleanup(cn.close)
	return cn
}

// close closes both ends, once.
func (c *conn) close() {
	for _, fd := range []*int{&c.client, &c.server} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

func full(fd int, buf []byte, write bool) error {
	for off := 0; off < len(buf); {
		var n int
		var err error
		if write {
			n, err = unix.Write(fd, buf[off:])
		} else {
			n, err = unix.Read(fd, buf[off:])
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("connection closed")
		}
		off += n
	}
	return nil
}

// rr makes rounds request/response round trips over c, the client and the
// server each on a locked thread of its own. onThread, when not nil, is
// called on each of the two threads before the first round (server is
// true on the server's).
func rr(t testing.TB, c *conn, rounds, req, resp int, onThread func(server bool)) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if onThread != nil {
			onThread(true)
		}
		in, out := make([]byte, req), make([]byte, resp)
		for range rounds {
			if err := full(c.server, in, false); err != nil {
				errc <- err
				return
			}
			if err := full(c.server, out, true); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if onThread != nil {
		onThread(false)
	}
	out, in := make([]byte, req), make([]byte, resp)
	for range rounds {
		if err := full(c.client, out, true); err != nil {
			t.Fatal(err)
		}
		if err := full(c.client, in, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func newTracer(t *testing.T, opts Options) *tracing.Tracer {
	t.Helper()
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := New(opts)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func read(t *testing.T, tr *tracing.Tracer) (deliver, rcvq uint64, hs map[string]float64) {
	t.Helper()
	h, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	p50 := map[string]float64{}
	for m, v := range h {
		p50[m] = v.Quantile(0.5)
	}
	return h[MetricDeliver].Count(), h[MetricRcvq].Count(), p50
}

// within reports whether got is want, give or take slack.
func within(got, want, slack uint64) bool { return got+slack >= want && got <= want+slack }

// TestCountsRoundTrips: every request and every response is one data
// segment (the messages fit one), delivered once and read once, so each
// metric counts two events per round trip. The connection is made after
// the tracer attaches (its sockets are the workload's from connect and
// accept on) and before (from their first read on: the first round trip's
// messages are then missed).
func TestCountsRoundTrips(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		for _, before := range []bool{false, true} {
			name := string(v) + "/connected-after-attach"
			if before {
				name = string(v) + "/connected-before-attach"
			}
			t.Run(name, func(t *testing.T) {
				var c *conn
				if before {
					c = dial(t)
				}
				tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Variant: v})
				if tr.Variant() != v {
					t.Errorf("variant %s, want %s", tr.Variant(), v)
				}
				if !before {
					c = dial(t)
				}
				const rounds = 5000
				rr(t, c, rounds, 64, 512, nil)
				deliver, rcvq, p50 := read(t, tr)
				missed, err := tr.Missed()
				if err != nil {
					t.Fatal(err)
				}
				want, slack := uint64(2*rounds), uint64(missed)
				if before {
					slack += 2 // the first round trip
				}
				if !within(deliver, want, slack) {
					t.Errorf("%s counted %d, want %d (2 per round trip of %d; missed %d)", MetricDeliver, deliver, want, rounds, missed)
				}
				if !within(rcvq, want, slack) {
					t.Errorf("%s counted %d, want %d (2 per round trip of %d; missed %d)", MetricRcvq, rcvq, want, rounds, missed)
				}
				t.Logf("%s n=%d p50 %.0f ns, %s n=%d p50 %.0f ns", MetricDeliver, deliver, p50[MetricDeliver], MetricRcvq, rcvq, p50[MetricRcvq])
				// Loopback delivery and a reader's wakeup take a few µs;
				// anything under 100 ns or over 10 ms at the median is not
				// what the metric says.
				for _, m := range Metrics {
					if p50[m] < 100 || p50[m] > 10e6 {
						t.Errorf("%s p50 %.0f ns is implausible", m, p50[m])
					}
				}
			})
		}
	}
}

// TestLargeMessages: a 256 KiB response is several segments, each
// delivered (counted by net.tcp.deliver), while net.tcp.rcvq counts the
// reader's waits for data on an emptied queue: at least one per message.
func TestLargeMessages(t *testing.T) {
	tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}})
	c := dial(t)
	const rounds, resp = 200, 256 << 10
	rr(t, c, rounds, 100, resp, nil)
	deliver, rcvq, p50 := read(t, tr)
	// Loopback segments carry up to 64 KiB: 4 or more per response.
	if deliver < rounds*5 {
		t.Errorf("%s counted %d, want at least %d: a request and 4 or more segments of each response", MetricDeliver, deliver, rounds*5)
	}
	if rcvq < 2*rounds || rcvq > deliver {
		t.Errorf("%s counted %d, want from %d (a wait per message) to the %d segments delivered", MetricRcvq, rcvq, 2*rounds, deliver)
	}
	for _, m := range Metrics {
		if p50[m] < 100 || p50[m] > 10e6 {
			t.Errorf("%s p50 %.0f ns is implausible", m, p50[m])
		}
	}
}

const helperEnv = "TAILGATE_TCP_TEST_HELPER"

// TestMain lets the test binary be the other process of
// TestIgnoresOtherProcesses: with helperEnv set to a number of rounds it
// waits for a line on stdin, then makes that many round trips over a
// connection of its own and exits.
func TestMain(m *testing.M) {
	if s := os.Getenv(helperEnv); s != "" {
		rounds, err := strconv.Atoi(s)
		if err == nil {
			_, err = bufio.NewReader(os.Stdin).ReadString('\n')
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		t := &testing.T{}
		rr(t, dial(t), rounds, 64, 64, nil)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestIgnoresOtherProcesses: another process's loopback traffic, made
// while this one's is traced, is not counted. The other process is
// started before the tracer attaches, so that it is not a child the
// tracer follows; it connects and exchanges its messages after.
func TestIgnoresOtherProcesses(t *testing.T) {
	for _, v := range []tracing.Variant{tracing.TPBTF, tracing.RawTP} {
		t.Run(string(v), func(t *testing.T) {
			const own, other = 1000, 20000
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+strconv.Itoa(other))
			cmd.Stderr = os.Stderr
			start, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}, Variant: v})
			if _, err := start.Write([]byte("go\n")); err != nil {
				t.Fatal(err)
			}
			rr(t, dial(t), own, 64, 64, nil)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("other process: %v", err)
			}
			deliver, rcvq, _ := read(t, tr)
			for m, n := range map[string]uint64{MetricDeliver: deliver, MetricRcvq: rcvq} {
				if !within(n, 2*own, 0) {
					t.Errorf("%s counted %d, want this process's %d (2 per round trip of %d), not the other's %d", m, n, 2*own, own, 2*other)
				}
			}
		})
	}
}

// TestThreadsMode counts only the sockets of registered threads: with the
// client's thread registered, the requests it sends (net.tcp.deliver) and the
// responses it reads (net.tcp.rcvq), not the server's side.
func TestThreadsMode(t *testing.T) {
	tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true}})
	c := dial(t) // by this thread, unregistered: no socket is marked yet
	const rounds = 3000
	var client int
	rr(t, c, rounds, 64, 64, func(server bool) {
		if !server {
			client = unix.Gettid()
			if err := tr.AddThread(client); err != nil {
				t.Error(err)
			}
		}
	})
	if err := tr.RemoveThread(client); err != nil {
		t.Fatal(err)
	}
	deliver, rcvq, _ := read(t, tr)
	// The client's socket is marked at its first read: the first request
	// goes unseen.
	for m, n := range map[string]uint64{MetricDeliver: deliver, MetricRcvq: rcvq} {
		if !within(n, rounds, 2) {
			t.Errorf("%s counted %d, want the client side's %d (1 per round trip)", m, n, rounds)
		}
	}
	// Unregistered threads' traffic over new sockets counts not at all.
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	rr(t, dial(t), rounds, 64, 64, nil)
	if deliver, rcvq, _ := read(t, tr); deliver != 0 || rcvq != 0 {
		t.Errorf("unregistered threads counted: %s %d, %s %d", MetricDeliver, deliver, MetricRcvq, rcvq)
	}
}

// TestClosedSocketsForgotten: sockets leave the tracer's set when they
// close, so that a socket allocated later at the same address is not taken
// for the workload's.
func TestClosedSocketsForgotten(t *testing.T) {
	tr := newTracer(t, Options{TracerOptions: tracing.TracerOptions{TGID: uint32(os.Getpid())}})
	socks := tracingtest.ProgramMap(t, tr.ProgramIDs(), "socks")
	for i := range 20 {
		c := dial(t)
		rr(t, c, 10, 8, 8, nil)
		if i == 0 {
			if n := mapLen(t, socks); n != 2 {
				t.Errorf("%d sockets in the set with one connection open, want its 2 ends", n)
			}
		}
		c.close()
	}
	// The side that closes last finishes closing after close(2) returns
	// (FIN handling in softirq): give it a moment.
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := mapLen(t, socks)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets still in the set 2 s after every connection closed", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mapLen(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	var k uint64
	v := make([]byte, m.ValueSize())
	n := 0
	it := m.Iterate()
	for it.Next(&k, &v) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
