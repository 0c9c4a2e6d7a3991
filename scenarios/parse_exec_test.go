package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/ufunc"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
	"github.com/tailgate-ci/tailgate/internal/result"
)

const goodExec = `name: my-server
workload:
  kind: exec
  command: [./server, --port, 8080]
  env: {GOMAXPROCS: 2, MODE: fast}
  dir: bin
  setup: [make, server]
  teardown: [rm, -f, /tmp/server.state]
  ready: {port: 8080, timeout: 5s}
  load: [./client, --port, 8080, --requests, 1000]
  ops: '^ok '
tracers:
  syscall: {syscalls: [read, write]}
`

func TestParseExec(t *testing.T) {
	s, err := Parse("/work/perf/server.yaml", []byte(goodExec))
	if err != nil {
		t.Fatal(err)
	}
	want := &Exec{
		Command:  []string{"./server", "--port", "8080"},
		Env:      map[string]string{"GOMAXPROCS": "2", "MODE": "fast"},
		Dir:      "/work/perf/bin",
		Setup:    []string{"make", "server"},
		Teardown: []string{"rm", "-f", "/tmp/server.state"},
		Ready:    &Ready{Port: "8080", Timeout: 5 * time.Second},
		Load:     []string{"./client", "--port", "8080", "--requests", "1000"},
		Ops:      "^ok ",
	}
	if s.Workload.Kind != "exec" {
		t.Fatalf("kind %q", s.Workload.Kind)
	}
	if diff := cmp.Diff(want, s.Workload.Params); diff != "" {
		t.Errorf("exec parameters (-want +got):\n%s", diff)
	}
	// The parameters cross to a trial worker as JSON and come back whole.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Scenario
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back.Workload.Params); diff != "" {
		t.Errorf("after a JSON round trip (-want +got):\n%s", diff)
	}
	if ThreadsAttributable(s.Workload) {
		t.Error("an exec workload's threads are not this process's")
	}
}

func TestParseExecDefaults(t *testing.T) {
	tests := []struct {
		name, workload string
		want           *Exec
	}{
		{"command only", "  command: [dd, if=/dev/zero, of=/dev/null, count=10]",
			&Exec{Command: []string{"dd", "if=/dev/zero", "of=/dev/null", "count=10"}}},
		{"ready file, default timeout", "  command: [sh, -c, 'touch ready; sleep 1']\n  ready: {file: ready}",
			&Exec{Command: []string{"sh", "-c", "touch ready; sleep 1"}, Ready: &Ready{File: "ready", Timeout: DefaultReadyTimeout}}},
		{"ready host:port", "  command: [srv]\n  ready:\n    port: '[::1]:9000'",
			&Exec{Command: []string{"srv"}, Ready: &Ready{Port: "[::1]:9000", Timeout: DefaultReadyTimeout}}},
		{"absolute dir", "  command: [srv]\n  dir: /opt/srv",
			&Exec{Command: []string{"srv"}, Dir: "/opt/srv"}},
		{"empty env value", "  command: [srv]\n  env: {EMPTY: ''}",
			&Exec{Command: []string{"srv"}, Env: map[string]string{"EMPTY": ""}}},
		{"built-in http load, ready at its port", "  command: [srv]\n  load: {http: 'http://127.0.0.1:8080/x', rate: 2000}",
			&Exec{Command: []string{"srv"}, Builtin: &loadgen.Spec{URL: "http://127.0.0.1:8080/x", Rate: 2000},
				Ready: &Ready{Port: "127.0.0.1:8080", Timeout: DefaultReadyTimeout}}},
		{"built-in tcp load", "  command: [srv]\n  ready: {port: 7071}\n  load:\n    tcp: 127.0.0.1:7071\n    send: \"ping\\n\"\n    reply: {until: \"\\n\"}\n    rate: 500\n    timeout: 2s",
			&Exec{Command: []string{"srv"}, Builtin: &loadgen.Spec{Addr: "127.0.0.1:7071", Send: "ping\n", ReplyUntil: "\n", Rate: 500, Timeout: 2 * time.Second},
				Ready: &Ready{Port: "7071", Timeout: DefaultReadyTimeout}}},
		{"built-in tcp load, reply bytes", "  command: [srv]\n  load: {tcp: 'localhost:9', send: x, reply: {bytes: 5}, rate: 1}",
			&Exec{Command: []string{"srv"}, Builtin: &loadgen.Spec{Addr: "localhost:9", Send: "x", ReplyBytes: 5, Rate: 1},
				Ready: &Ready{Port: "localhost:9", Timeout: DefaultReadyTimeout}}},
		{"latencies from stdout", "  command: [srv]\n  load: [wrk2, --latency, 'http://x/']\n  latencies: {format: wrk2}",
			&Exec{Command: []string{"srv"}, Load: []string{"wrk2", "--latency", "http://x/"}, Latencies: &LoadOutput{Format: "wrk2"}}},
		{"latencies from a file", "  command: [srv]\n  load: [gen]\n  latencies: {format: hlog, file: out.hlog, unit: us}",
			&Exec{Command: []string{"srv"}, Load: []string{"gen"}, Latencies: &LoadOutput{Format: "hlog", File: "out.hlog", Unit: "us"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: x\nworkload:\n  kind: exec\n" + tt.workload + "\ntracers:\n  sched: {}\n"
			s, err := Parse("x.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Workload.Params); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A relative dir is relative to the scenario file; a built-in's is left
// relative to the working directory.
func TestParseExecDir(t *testing.T) {
	src := "name: x\nworkload:\n  kind: exec\n  command: [srv]\n  dir: ../bin\ntracers:\n  sched: {}\n"
	s, err := Parse("perf/sub/x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("perf/bin")
	if got := s.Workload.Params.(*Exec).Dir; got != abs {
		t.Errorf("dir %q, want %q", got, abs)
	}
	s, err = Parse("builtin:x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Workload.Params.(*Exec).Dir; got != "../bin" {
		t.Errorf("built-in's dir %q, want ../bin", got)
	}
}

// A ufunc binary with a slash is relative to the scenario file however
// the file is named: a bare name in the working directory (x.yaml) made
// ./server the name server, looked up in $PATH (issue 19). A name without
// a slash (libc.so.6) is left to be looked up; an error still names the
// file as given.
func TestParseUfuncBinaryRelativeToFile(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ source, binary, want string }{
		{"x.yaml", "./server", filepath.Join(wd, "server")},
		{"./x.yaml", "./server", filepath.Join(wd, "server")},
		{"perf/x.yaml", "./server", filepath.Join(wd, "perf/server")},
		{"perf/x.yaml", "../bin/server", filepath.Join(wd, "bin/server")},
		{"/srv/x.yaml", "./server", "/srv/server"},
		{"x.yaml", "libc.so.6", "libc.so.6"},
		{"builtin:x.yaml", "./server", "./server"},
	} {
		src := "name: x\nworkload: {kind: syscall}\ntracers:\n  ufunc: {binary: " + tt.binary + ", symbols: [main]}\n"
		s, err := Parse(tt.source, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", tt.source, err)
		}
		if got := s.Tracers["ufunc"].(*ufunc.Config).Binary; got != tt.want {
			t.Errorf("%s, binary %s: %q, want %q", tt.source, tt.binary, got, tt.want)
		}
		if s.Source != tt.source {
			t.Errorf("Source %q, want %q as given", s.Source, tt.source)
		}
	}
	_, err = Parse("x.yaml", []byte("name: x\nworkload: {kind: syscall}\ntracers:\n  ufunc: {binary: ./server}\n"))
	wantParseError(t, err, 4, 3, "needs")
	if err == nil || !strings.HasPrefix(err.Error(), "x.yaml:4:3: ") {
		t.Errorf("error %v, want it to name x.yaml as given", err)
	}
}

func TestParseExecErrors(t *testing.T) {
	tests := []struct {
		name, workload string
		want           string // the "file:line:column: " prefix and a part of the message
	}{
		{"no command", "  ops: x",
			`x.yaml:2:1: workload kind exec needs command: the program to measure and its arguments`},
		{"command a string", "  command: dd if=/dev/zero",
			`x.yaml:4:12: command must be a list of arguments, not a string; write [sh, -c, "dd if=/dev/zero"] to run it in a shell`},
		{"command a mapping", "  command: {a: b}",
			`x.yaml:4:13: command must be a list of arguments, e.g. [sh, -c, "echo hi"], got a mapping`},
		{"empty command", "  command: []",
			`x.yaml:4:12: command is empty; give the program and its arguments`},
		{"argument a list", "  command: [sh, [x]]",
			`x.yaml:4:17: the arguments of command must be strings, got a list`},
		{"empty program", "  command: ['', x]",
			`x.yaml:4:13: the program name of command is empty`},
		{"load a string", "  command: [srv]\n  load: client --n 3",
			`x.yaml:5:9: load must be a list of arguments, not a string`},
		{"env a list", "  command: [srv]\n  env: [A=1]",
			`x.yaml:5:8: workload.env must be a mapping, got a list`},
		{"env value a list", "  command: [srv]\n  env: {A: [1]}",
			`x.yaml:5:12: env A must be a string, got a list`},
		{"empty dir", "  command: [srv]\n  dir: ''",
			`x.yaml:5:8: dir is empty`},
		{"bad ops", "  command: [srv]\n  ops: '(ok'",
			"x.yaml:5:8: ops \"(ok\" is not a regular expression"},
		{"ready neither", "  command: [srv]\n  ready: {timeout: 3s}",
			`x.yaml:5:3: ready needs port (a TCP port that accepts, e.g. port: 8080) or file`},
		{"ready both", "  command: [srv]\n  ready: {port: 80, file: x}",
			`x.yaml:5:21: ready takes one of port and file, not both`},
		{"ready bad port", "  command: [srv]\n  ready: {port: 70000}",
			`x.yaml:5:17: ready port must be from 1 to 65535, got 70000`},
		{"ready port not an address", "  command: [srv]\n  ready: {port: localhost}",
			`x.yaml:5:17: ready port "localhost": want a port number or host:port`},
		{"ready unknown key", "  command: [srv]\n  ready: {url: http://x}",
			`x.yaml:5:11: unknown key "url" in workload.ready; allowed: port, file, timeout`},
		{"ready timeout without unit", "  command: [srv]\n  ready: {port: 80, timeout: 10}",
			`x.yaml:5:30: timeout "10" has no unit`},
		{"ready timeout too long", "  command: [srv]\n  ready: {port: 80, timeout: 1h}",
			`x.yaml:5:30: timeout must be from 1ms to 10m0s, got 1h`},
		{"built-in load without rate", "  command: [srv]\n  load: {http: 'http://127.0.0.1:80/'}",
			`x.yaml:5:3: the built-in load needs rate`},
		{"built-in load without target", "  command: [srv]\n  load: {rate: 10}",
			`x.yaml:5:3: the built-in load needs http (a URL`},
		{"built-in load both targets", "  command: [srv]\n  load: {http: 'http://a:1/', tcp: 'a:1', rate: 1}",
			`x.yaml:5:31: load takes one of http and tcp, not both`},
		{"built-in load https", "  command: [srv]\n  load: {http: 'https://a/', rate: 1}",
			`x.yaml:5:16: load http "https://a/": want an http:// URL`},
		{"built-in load rate 0", "  command: [srv]\n  load: {http: 'http://a:1/', rate: 0}",
			`x.yaml:5:37: rate must be from 1 to 1000000, got 0`},
		{"built-in load unknown key", "  command: [srv]\n  load: {http: 'http://a:1/', rate: 1, method: POST}",
			`x.yaml:5:40: unknown key "method" in workload.load; allowed: http, tcp, send, reply, rate, timeout`},
		{"built-in tcp without send", "  command: [srv]\n  load: {tcp: 'a:1', reply: {bytes: 1}, rate: 1}",
			`x.yaml:5:10: load tcp needs send`},
		{"built-in tcp with two replies", "  command: [srv]\n  load: {tcp: 'a:1', send: x, reply: {bytes: 1, until: x}, rate: 1}",
			`x.yaml:5:31: reply takes one of bytes`},
		{"built-in http with send", "  command: [srv]\n  load: {http: 'http://a:1/', send: x, rate: 1}",
			`x.yaml:5:10: load: send and reply go with tcp, not http`},
		{"built-in load with ops", "  command: [srv]\n  load: {http: 'http://a:1/', rate: 1}\n  ops: ok",
			`x.yaml:2:1: ops counts lines of a load command's output`},
		{"latencies without load", "  command: [srv]\n  latencies: {format: hey}",
			`x.yaml:2:1: latencies are read from the output of load, a command`},
		{"latencies with the built-in load", "  command: [srv]\n  load: {http: 'http://a:1/', rate: 1}\n  latencies: {format: hey}",
			`x.yaml:2:1: latencies are read from the output of load, a command`},
		{"latencies unknown format", "  command: [srv]\n  load: [gen]\n  latencies: {format: jmeter}",
			`x.yaml:6:23: unknown latencies format "jmeter"; allowed: wrk2, vegeta, hey, ghz, hlog`},
		{"latencies without format", "  command: [srv]\n  load: [gen]\n  latencies: {file: x}",
			`x.yaml:6:3: latencies needs format: one of wrk2, vegeta, hey, ghz, hlog`},
		{"latencies unit of another format", "  command: [srv]\n  load: [gen]\n  latencies: {format: hey, unit: us}",
			`x.yaml:6:3: latencies: unit goes with format hlog`},
		{"latencies bad unit", "  command: [srv]\n  load: [gen]\n  latencies: {format: hlog, unit: sec}",
			`x.yaml:6:35: unknown unit "sec"; allowed: ns, us, ms, s`},
		{"key of another kind", "  command: [srv]\n  threads: 2",
			`x.yaml:5:3: threads does not apply to workload kind exec; exec takes: command, env, dir, setup, teardown, ready, load, latencies, ops, noise`},
		{"attach in a file", "  pid: 1",
			`workload kind attach is what tailgate run --pid PID and --cgroup PATH measure`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := "exec"
			if strings.Contains(tt.name, "attach") {
				kind = "attach"
			}
			src := "name: x\nworkload:\n  kind: " + kind + "\n" + tt.workload + "\ntracers:\n  sched: {}\n"
			_, err := Parse("x.yaml", []byte(src))
			if err == nil {
				t.Fatalf("no error; want %s", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n\t%v\nwant it to hold\n\t%s", err, tt.want)
			}
		})
	}
}

func TestExecCheck(t *testing.T) {
	tests := []struct {
		name string
		e    Exec
		want string // "" for valid
	}{
		{"valid", Exec{Command: []string{"dd"}}, ""},
		{"no command", Exec{}, "command is empty"},
		{"NUL in an argument", Exec{Command: []string{"sh", "a\x00b"}}, "NUL"},
		{"bad env name", Exec{Command: []string{"sh"}, Env: map[string]string{"A=B": "1"}}, "bad variable name"},
		{"bad ops", Exec{Command: []string{"sh"}, Ops: "("}, "ops:"},
		{"ready without what", Exec{Command: []string{"sh"}, Ready: &Ready{Timeout: time.Second}}, "one of port or file"},
		{"ready without timeout", Exec{Command: []string{"sh"}, Ready: &Ready{File: "x"}}, ""}, // defaulted
		{"built-in load", Exec{Command: []string{"sh"}, Builtin: &loadgen.Spec{URL: "http://a:1/", Rate: 1}}, ""},
		{"built-in load and a command", Exec{Command: []string{"sh"}, Load: []string{"x"}, Builtin: &loadgen.Spec{URL: "http://a:1/", Rate: 1}}, "not both"},
		{"built-in load without rate", Exec{Command: []string{"sh"}, Builtin: &loadgen.Spec{URL: "http://a:1/"}}, "rate must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Workload{Kind: "exec", Params: &tt.e}
			err := w.withDefaults().check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one holding %q", err, tt.want)
			}
		})
	}
}

// The digest of an exec workload is that of its programs, not of where
// the checkout is; an attached process's, not of its pid.
func TestExecParams(t *testing.T) {
	parse := func(src, yaml string) *Scenario {
		t.Helper()
		s, err := Parse(src, []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := parse("/ci/run1/perf/x.yaml", goodExec)
	b := parse("/home/me/src/perf/x.yaml", goodExec)
	if a.Workload.Params.(*Exec).Dir == b.Workload.Params.(*Exec).Dir {
		t.Fatal("test needs different dirs")
	}
	if Params(a) != Params(b) {
		t.Error("the same scenario in two checkouts has two digests")
	}
	c := parse("/ci/run1/perf/x.yaml", strings.Replace(goodExec, "--requests, 1000", "--requests, 2000", 1))
	if Params(a) == Params(c) {
		t.Error("a different load has the same digest")
	}
	s := *a
	s.Workload = AttachWorkload(Attach{PID: 100})
	p100 := Params(&s)
	s.Workload = AttachWorkload(Attach{PID: 200})
	if Params(&s) != p100 {
		t.Error("two pids of one --pid measurement have two digests")
	}
	s.Workload = AttachWorkload(Attach{Cgroup: "/sys/fs/cgroup/a"})
	if Params(&s) == p100 {
		t.Error("a cgroup and a pid have one digest")
	}
}

// The built-in load crosses to a trial worker as load's object form and
// comes back whole; it is part of the digest.
func TestExecBuiltinJSON(t *testing.T) {
	src := "name: x\nworkload:\n  kind: exec\n  command: [srv]\n  load: {tcp: 'a:1', send: \"q\\n\", reply: {until: \"\\n\"}, rate: 300}\ntracers:\n  sched: {}\n"
	s, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"load":{"tcp":"a:1","send":"q\n","reply_until":"\n","rate":300}`) {
		t.Errorf("JSON %s does not hold load as an object", b)
	}
	var back Scenario
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Workload.Params, back.Workload.Params); diff != "" {
		t.Errorf("after a JSON round trip (-want +got):\n%s", diff)
	}
	if got := Metrics(s); !slices.Contains(got, loadgen.Metric) {
		t.Errorf("metrics %v, want %s", got, loadgen.Metric)
	}
	if got := GatePolicy(s); got[loadgen.Metric]["p99"] != DefaultGateThreshold {
		t.Errorf("gate %v, want p99 of %s", got, loadgen.Metric)
	}
	faster, err := Parse("x.yaml", []byte(strings.Replace(src, "rate: 300", "rate: 400", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if Params(s) == Params(faster) {
		t.Error("two rates of the built-in load have one digest")
	}
}

// An exec workload with a ready port and no tracers is a server whose
// requests are measured and gated at p99; without a ready port, or with
// tracers named, nothing is added.
func TestExecServerMeasuresRequestsByDefault(t *testing.T) {
	tests := []struct {
		name, body string
		metrics    []string
		gate       result.GatePolicy
		err        string
	}{
		{"ready port, no tracers, no gate",
			"  command: [./server]\n  ready: {port: 8080}\n",
			[]string{"request.server"}, result.GatePolicy{"request.server": {"p99": DefaultGateThreshold}}, ""},
		{"ready port, a gate of its own",
			"  command: [./server]\n  ready: {port: 8080}\ngate:\n  request.server: {p99: 5%}\n",
			[]string{"request.server"}, result.GatePolicy{"request.server": {"p99": 0.05}}, ""},
		{"ready port, tracers named",
			"  command: [./server]\n  ready: {port: 8080}\ntracers:\n  sched: {}\n",
			[]string{"sched.runq", "sched.runq_preempted", "sched.wakeup_new"}, nil, ""},
		{"built-in load, no tracers: the client's view and the server's",
			"  command: [./server]\n  load: {tcp: '127.0.0.1:8080', send: x, reply: {bytes: 1}, rate: 100}\n",
			[]string{"request.server", loadgen.Metric},
			result.GatePolicy{loadgen.Metric: {"p99": DefaultGateThreshold}, "request.server": {"p99": DefaultGateThreshold}}, ""},
		{"ready file, no tracers",
			"  command: [./server]\n  ready: {file: up}\n",
			nil, nil, "scenario measures nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte("name: x\nworkload:\n  kind: exec\n"+tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.metrics, Metrics(s)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			if tt.gate != nil {
				if diff := cmp.Diff(tt.gate, GatePolicy(s)); diff != "" {
					t.Errorf("gate (-want +got):\n%s", diff)
				}
			}
		})
	}
}
