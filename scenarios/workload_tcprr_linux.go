//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// tcpRRLoad is the tcp-rr kind, in the manner of netperf's TCP_RR: in
// each pair a client thread writes a request over a loopback TCP
// connection and reads the server thread's response, then the next. Ops
// counts round trips; the client times each, write to the response's last
// byte, as tcp.rr.
//
// The first byte of a request says whether it is the last: the client
// ends a run with a request that asks the server to answer and return, so
// both threads stop at a message boundary and the connection carries over
// to the next run clean.
type tcpRRLoad struct {
	p     TCPRR
	pairs []*tcpRRPair
}

// tcpRRPair is one pair's connection: the client's end and the server's,
// -1 once closed.
type tcpRRPair struct {
	client, server int
	// broken is set when a failed run shut the connection down (by
	// either thread); the next run makes a new one.
	broken atomic.Bool
}

// Request flags, the first byte of each request.
const (
	tcpRRMore = 0
	tcpRRLast = 1
)

func newTCPRRKind(w Workload, _ int) (kindLoad, error) {
	l, err := newTCPRRLoad(w.Pairs, *w.Params.(*TCPRR))
	if err != nil {
		return nil, err
	}
	return l, nil
}

func newTCPRRLoad(pairs int, p TCPRR) (*tcpRRLoad, error) {
	l := &tcpRRLoad{p: p}
	for range pairs {
		pr := &tcpRRPair{client: -1, server: -1}
		l.pairs = append(l.pairs, pr)
		if err := l.connect(pr); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

// connect makes pr's loopback connection: a listener on an ephemeral port
// of 127.0.0.1, closed once it has accepted the client.
func (l *tcpRRLoad) connect(pr *tcpRRPair) (err error) {
	pr.closeFDs()
	defer func() {
		if err != nil {
			pr.closeFDs()
		}
	}()
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tcp-rr: socket: %w", err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("tcp-rr: bind 127.0.0.1: %w", err)
	}
	if err := unix.Listen(ln, 1); err != nil {
		return fmt.Errorf("tcp-rr: listen: %w", err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		return fmt.Errorf("tcp-rr: getsockname: %w", err)
	}
	if pr.client, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fmt.Errorf("tcp-rr: socket: %w", err)
	}
	if err := unix.Connect(pr.client, sa); err != nil {
		return fmt.Errorf("tcp-rr: connect to %s: %w", sockaddrString(sa), err)
	}
	if pr.server, _, err = unix.Accept4(ln, unix.SOCK_CLOEXEC); err != nil {
		return fmt.Errorf("tcp-rr: accept: %w", err)
	}
	if !l.p.Nagle {
		for _, fd := range []int{pr.client, pr.server} {
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
				return fmt.Errorf("tcp-rr: TCP_NODELAY: %w", err)
			}
		}
	}
	pr.broken.Store(false)
	return nil
}

func sockaddrString(sa unix.Sockaddr) string {
	if in, ok := sa.(*unix.SockaddrInet4); ok {
		return fmt.Sprintf("%d.%d.%d.%d:%d", in.Addr[0], in.Addr[1], in.Addr[2], in.Addr[3], in.Port)
	}
	return fmt.Sprintf("%v", sa)
}

func (pr *tcpRRPair) closeFDs() error {
	var errs []error
	for _, fd := range []*int{&pr.client, &pr.server} {
		if *fd >= 0 {
			errs = append(errs, unix.Close(*fd))
			*fd = -1
		}
	}
	return errors.Join(errs...)
}

// shutdown ends pr's connection both ways, so that a thread blocked on
// either end returns: what a failing member does for its partner.
func (pr *tcpRRPair) shutdown() {
	pr.broken.Store(true)
	unix.Shutdown(pr.client, unix.SHUT_RDWR)
	unix.Shutdown(pr.server, unix.SHUT_RDWR)
}

func (l *tcpRRLoad) threads() int { return 2 * len(l.pairs) }

func (l *tcpRRLoad) close() error {
	var errs []error
	for _, pr := range l.pairs {
		errs = append(errs, pr.closeFDs())
	}
	l.pairs = nil
	return errors.Join(errs...)
}

func (l *tcpRRLoad) run(ctx context.Context) (Stats, error) {
	for _, pr := range l.pairs {
		if pr.broken.Load() {
			if err := l.connect(pr); err != nil {
				return Stats{}, err
			}
		}
	}
	// The client never waits for long (its server answers every request),
	// and it ends the run for both: no one needs waking.
	return runCrew(ctx, 0, 2*len(l.pairs), l.thread, nil)
}

// thread runs member i: 2k is pair k's client, 2k+1 its server.
func (l *tcpRRLoad) thread(i int, c *crew, m *member) {
	pr := l.pairs[i/2]
	var err error
	if i%2 == 0 {
		err = l.client(pr, c, m)
	} else {
		err = l.server(pr, m)
	}
	if err != nil {
		m.err = err
		pr.shutdown()
	}
}

func (l *tcpRRLoad) client(pr *tcpRRPair, c *crew, m *member) error {
	rtt := hist.New()
	m.hists = map[string]*hist.Histogram{MetricTCPRR: rtt}
	req, resp := make([]byte, l.p.Request), make([]byte, l.p.Response)
	for {
		last := c.stop.Load()
		if last {
			req[0] = tcpRRLast
		} else {
			req[0] = tcpRRMore
		}
		start := time.Now()
		if err := sendFull(pr.client, req, m); err != nil {
			return fmt.Errorf("tcp-rr client: %w", err)
		}
		if err := recvFull(pr.client, resp, m); err != nil {
			return fmt.Errorf("tcp-rr client: %w", err)
		}
		if last {
			return nil
		}
		rtt.Record(uint64(time.Since(start)))
		m.ops++
	}
}

func (l *tcpRRLoad) server(pr *tcpRRPair, m *member) error {
	req, resp := make([]byte, l.p.Request), make([]byte, l.p.Response)
	for {
		if err := recvFull(pr.server, req, m); err != nil {
			return fmt.Errorf("tcp-rr server: %w", err)
		}
		if err := sendFull(pr.server, resp, m); err != nil {
			return fmt.Errorf("tcp-rr server: %w", err)
		}
		if req[0] == tcpRRLast {
			return nil
		}
	}
}

// errPeerClosed is a read that found the connection closed.
var errPeerClosed = errors.New("connection closed by the other side")

// sendFull writes all of buf, recvFull reads exactly len(buf) bytes; both
// retry on EINTR and count every call.
func sendFull(fd int, buf []byte, m *member) error {
	return transferFull(unix.SYS_WRITE, fd, buf, m)
}

func recvFull(fd int, buf []byte, m *member) error {
	return transferFull(unix.SYS_READ, fd, buf, m)
}

func transferFull(trap uintptr, fd int, buf []byte, m *member) error {
	name := "read"
	if trap == unix.SYS_WRITE {
		name = "write"
	}
	for off := 0; off < len(buf); {
		n, _, e := unix.Syscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&buf[off])), uintptr(len(buf)-off))
		m.sys[name]++
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			return fmt.Errorf("%s: %w", name, e)
		case n == 0:
			return fmt.Errorf("%s: %w", name, errPeerClosed)
		}
		off += int(n)
	}
	return nil
}
