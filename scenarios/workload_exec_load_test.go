//go:build linux && amd64

package scenarios

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

// TestMain lets this test binary be the server a built-in load talks to:
// with TAILGATE_TEST_SERVE=http:ADDR or tcp:ADDR (or http500:ADDR) it
// serves there instead of running the tests.
func TestMain(m *testing.M) {
	if what, addr, ok := strings.Cut(os.Getenv("TAILGATE_TEST_SERVE"), ":"); ok {
		serve(what, addr)
		return
	}
	os.Exit(m.Run())
}

func serve(what, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(2)
	}
	if what == "tcp" {
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(2)
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte("re " + line))
				}
			}()
		}
	}
	status := http.StatusOK
	if what == "http500" {
		status = http.StatusInternalServerError
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte("hello\n"))
	}))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The built-in load measures each request of a run: about rate ×
// duration of them, its ops, in request.client; the command keeps
// running between runs; a failing request fails the run.
func TestExecBuiltinLoad(t *testing.T) {
	for _, tc := range []struct {
		name, serve string
		spec        func(addr string) *loadgen.Spec
		fail        string
	}{
		{"http", "http", func(a string) *loadgen.Spec { return &loadgen.Spec{URL: "http://" + a + "/", Rate: 500} }, ""},
		{"tcp", "tcp", func(a string) *loadgen.Spec {
			return &loadgen.Spec{Addr: a, Send: "ping\n", ReplyUntil: "\n", Rate: 500}
		}, ""},
		{"http 500", "http500", func(a string) *loadgen.Spec { return &loadgen.Spec{URL: "http://" + a + "/", Rate: 500} }, "HTTP status 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			w, m := marked(Exec{Command: []string{os.Args[0]}, Builtin: tc.spec(addr)})
			w.Params.(*Exec).Env["TAILGATE_TEST_SERVE"] = tc.serve + ":" + addr
			r := newExec(t, w)
			defer checkClean(t, m)
			defer r.Close()
			for run := range 2 {
				if err := Start(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				st, err := r.Run(ctx)
				cancel()
				if tc.fail != "" {
					if err == nil || !strings.Contains(err.Error(), tc.fail) {
						t.Fatalf("run error %v, want one with %q", err, tc.fail)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				h := st.Metrics[loadgen.Metric]
				if h == nil || h.Count() < 100 || h.Count() > 160 || h.Count() != st.Ops {
					t.Fatalf("run %d: %v requests measured, ops %d; want about 150 (500/s for 300 ms), as many ops", run, h.Count(), st.Ops)
				}
			}
		})
	}
}
