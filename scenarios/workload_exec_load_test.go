//go:build linux && amd64

package scenarios

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/loadfile"
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
	needCgroups(t)
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

// A load command's latencies, read after each run from its stdout or a
// file it writes: request.client holds them and the ops are its
// requests. A run its end cuts before load wrote them measures none,
// without failing (a warmup is such a run); output that does not read as
// its format fails the run with file:line; a failure it reports fails it.
func TestExecLatencies(t *testing.T) {
	needCgroups(t)
	recorded, err := filepath.Abs("../internal/loadfile/testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		load  []string
		out   LoadOutput
		cut   bool
		count uint64 // requests measured; 0 for none
		fail  string
	}{
		{"wrk2 on stdout", []string{"cat", recorded + "/wrk2.txt"}, LoadOutput{Format: "wrk2"}, false, 600, ""},
		{"hlog file", []string{"cp", recorded + "/hlog.hlog", "out.hlog"}, LoadOutput{Format: "hlog", File: "out.hlog", Unit: "us"}, false, hlogCount(t, recorded), ""},
		{"cut before it wrote", []string{"sleep", "1000"}, LoadOutput{Format: "hey"}, true, 0, ""},
		{"written on SIGINT", []string{"sh", "-c", "trap 'cat " + recorded + "/hey.csv; exit 0' INT; sleep 1000 & wait"}, LoadOutput{Format: "hey"}, true, 200, ""},
		{"not its format", []string{"echo", "hello"}, LoadOutput{Format: "ghz"}, false, 0, "latencies of load echo hello: load's stdout:1: not ghz's JSON report"},
		{"failures", []string{"printf", `{"count":1,"details":[{"latency":5,"status":"Unavailable","error":"down"}]}`}, LoadOutput{Format: "ghz"}, false, 0, "1 requests failed; the first: down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, m := marked(Exec{Command: []string{"sleep", "1000"}, Dir: dir, Ready: &Ready{File: "/", Timeout: time.Second},
				Load: tc.load, Latencies: &tc.out})
			r := newExec(t, w)
			defer checkClean(t, m)
			defer r.Close()
			if err := Start(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if tc.cut {
				ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
			}
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
			if tc.count == 0 {
				if h != nil {
					t.Errorf("a cut run measured %d requests, want none", h.Count())
				}
				return
			}
			if h == nil || h.Count() != tc.count || st.Ops != tc.count {
				t.Errorf("measured %v requests, ops %d; want %d of each", h, st.Ops, tc.count)
			}
		})
	}
}

// hlogCount is the number of values the recorded HdrHistogram log holds.
func hlogCount(t *testing.T, dir string) uint64 {
	t.Helper()
	l, err := loadfile.Load(loadfile.HdrLog, dir+"/hlog.hlog", loadfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Hist.Count()
}
