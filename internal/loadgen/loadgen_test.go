package loadgen

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// staller serves requests one at a time and holds the n-th for stall:
// every request meant to go out meanwhile waits behind it.
type staller struct {
	mu    sync.Mutex
	n     int
	at    int
	stall time.Duration
}

func (s *staller) serve() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n == s.at {
		time.Sleep(s.stall)
	}
}

func tcpServer(t *testing.T, st *staller, reply string) string {
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
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := br.ReadString('\n'); err != nil {
						return
					}
					st.serve()
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestNoCoordinatedOmission stalls the server for 100 ms once, at 1000
// requests/s: measured from their intended send times, the ~100 requests
// due during the stall wait for it, about half of them over 50 ms. A
// closed-loop generator, or one that starts the clock when it sends,
// would count one.
func TestNoCoordinatedOmission(t *testing.T) {
	for _, kind := range []string{"http", "tcp"} {
		t.Run(kind, func(t *testing.T) {
			st := &staller{at: 100, stall: 100 * time.Millisecond}
			s := &Spec{Rate: 1000}
			if kind == "http" {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					st.serve()
					w.Write([]byte("ok\n"))
				}))
				t.Cleanup(srv.Close)
				s.URL = srv.URL
			} else {
				s.Addr, s.Send, s.ReplyUntil = tcpServer(t, st, "ok\n"), "ping\n", "\n"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			defer cancel()
			o, err := Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Err(); err != nil {
				t.Fatal(err)
			}
			if o.Sent < 250 || o.Sent > 420 {
				t.Errorf("sent %d requests in 400 ms at 1000/s, want about 400", o.Sent)
			}
			if got := o.Latency.Count(); got != o.Sent {
				t.Errorf("%d latencies of %d requests", got, o.Sent)
			}
			var over uint64
			for i, c := range o.Latency.Counts() {
				if lo, _ := hist.Bounds(i); lo >= uint64(50*time.Millisecond) {
					over += c
				}
			}
			// More when this machine is busy: the backlog drains slower.
			if over < 30 {
				t.Errorf("%d requests over 50 ms behind a 100 ms stall at 1000/s, want about 50", over)
			}
		})
	}
}

func TestFailuresFailTheRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"http 500", Spec{URL: srv.URL, Rate: 200}, "HTTP status 500"},
		{"tcp refused", Spec{Addr: closed, Send: "x", ReplyBytes: 1, Rate: 200}, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			o, err := Run(ctx, &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			err = o.Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) || o.Failed != o.Sent {
				t.Errorf("Err() = %v after %d of %d failed, want every request failed with %q", err, o.Failed, o.Sent, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string // "" for valid
	}{
		{"http", Spec{URL: "http://127.0.0.1:8080/x", Rate: 10}, ""},
		{"tcp", Spec{Addr: "127.0.0.1:7", Send: "a", ReplyUntil: "\n", Rate: 10}, ""},
		{"neither", Spec{Rate: 10}, "one of http"},
		{"both", Spec{URL: "http://a/", Addr: "a:1", Rate: 10}, "one of http"},
		{"https", Spec{URL: "https://a/", Rate: 10}, "http:// URL"},
		{"no rate", Spec{URL: "http://a/"}, "rate must be"},
		{"send with http", Spec{URL: "http://a/", Send: "x", Rate: 1}, "go with tcp"},
		{"bad addr", Spec{Addr: "7071", Send: "a", ReplyBytes: 1, Rate: 1}, "host:port"},
		{"no send", Spec{Addr: "a:1", ReplyBytes: 1, Rate: 1}, "needs send"},
		{"no reply", Spec{Addr: "a:1", Send: "a", Rate: 1}, "needs reply"},
		{"two replies", Spec{Addr: "a:1", Send: "a", ReplyBytes: 1, ReplyUntil: "\n", Rate: 1}, "needs reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Check()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// A pacer held up past the run's end still sends every request due
// before the end, each with its own intended time, and none after it.
func TestPaceOmitsNoneAtTheEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	period := time.Millisecond
	var sent []time.Time
	pace(ctx, period, func(intended time.Time) {
		if len(sent) == 0 {
			time.Sleep(150 * time.Millisecond) // the generator stalls past the end
		}
		sent = append(sent, intended)
	})
	if n := len(sent); n < 98 || n > 100 {
		t.Fatalf("sent %d requests due in 100 ms at 1000/s, want 98-100", n)
	}
	for i, at := range sent {
		if !at.Before(deadline) {
			t.Errorf("request %d intended %v after the end", i, at.Sub(deadline))
		}
		if i > 0 && at.Sub(sent[i-1]) != period {
			t.Errorf("requests %d and %d intended %v apart, want %v", i-1, i, at.Sub(sent[i-1]), period)
		}
	}
}

// Up to 2000 requests/s the pacer sleeps on a thread whose timer slack is
// 1 ns (wait.go); above, on Go's timers, in whatever thread runs it,
// whose slack is the default 50 µs; and the precise thread's slack does
// not leak to the caller's.
func TestPaceSleepsPreciselyUpTo2000PerSecond(t *testing.T) {
	slack := func() int {
		r, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		rate    int
		precise bool
	}{{100, true}, {2000, true}, {2001, false}, {10000, false}} {
		period := time.Second / time.Duration(c.rate)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		var slacks []int
		pace(ctx, period, func(time.Time) { slacks = append(slacks, slack()) })
		cancel()
		if len(slacks) == 0 {
			t.Fatalf("%d/s: nothing sent in 20 ms", c.rate)
		}
		for _, s := range slacks {
			if (s == 1) != c.precise {
				t.Errorf("%d/s: a send ran on a thread of timer slack %d ns; want 1 ns: %v", c.rate, s, c.precise)
				break
			}
		}
	}
	if s := slack(); s == 1 {
		t.Errorf("the test's own thread has a timer slack of 1 ns after the pacer ran")
	}
}
