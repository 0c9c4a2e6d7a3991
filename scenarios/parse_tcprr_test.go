package scenarios

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/config"
)

func TestParseTCPRR(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       *TCPRR
		err        string
	}{
		{"defaults", "pairs: 2", &TCPRR{Request: DefaultTCPRRRequest, Response: DefaultTCPRRResponse}, ""},
		{"sizes", "request: 64\nresponse: 4096", &TCPRR{Request: 64, Response: 4096}, ""},
		{"nagle", "nagle: true", &TCPRR{Request: 1, Response: 1, Nagle: true}, ""},
		{"largest", "request: 1048576\nresponse: 1048576", &TCPRR{Request: 1 << 20, Response: 1 << 20}, ""},
		{"zero request", "request: 0", nil, "x.yaml:1:10: request must be from 1 to 1048576, got 0"},
		{"response too large", "response: 2097152", nil, "x.yaml:1:11: response must be from 1 to 1048576, got 2097152"},
		{"size with a unit", "request: 4KiB", nil, `x.yaml:1:10: request must be an integer from 1 to 1048576, got a string "4KiB"`},
		{"nagle not a boolean", "nagle: on-please", nil, `x.yaml:1:8: nagle must be true or false, got a string "on-please"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parser.ParseBytes([]byte(tt.yaml), 0)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := config.NewNode("x.yaml", f.Docs[0].Body).Fields("workload", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseTCPRR(fs)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err := got.check(); err != nil {
				t.Errorf("check of a parsed TCPRR: %v", err)
			}
		})
	}
}

func TestTCPRRCheck(t *testing.T) {
	if err := (TCPRR{}).withDefaults().check(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (TCPRR{Request: -1, Response: 1}).check(); err == nil {
		t.Error("request -1 passed the check")
	}
	if err := (TCPRR{Request: 1, Response: maxTCPRRMessage + 1}).check(); err == nil {
		t.Error("a response over the limit passed the check")
	}
}

func TestParseTCPRRScenario(t *testing.T) {
	const src = `name: rr
workload:
  kind: tcp-rr
  request: 64
  response: 4096
  pairs: 2
tracers:
  net: {}
  syscall: {}
`
	s, err := Parse("rr.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Kind: "tcp-rr", Pairs: 2, Params: &TCPRR{Request: 64, Response: 4096}}
	if diff := cmp.Diff(want, s.Workload); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	// The syscall tracer defaults to the round trip's syscalls.
	if diff := cmp.Diff([]string{"syscall.read", "syscall.write", "net.tcp.deliver", "net.tcp.rcvq", MetricTCPRR}, Metrics(s)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{MetricTCPRR}, PrimaryMetrics(s)); diff != "" {
		t.Errorf("primary metrics (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(s.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"kind":"tcp-rr","pairs":2,"request":64,"response":4096}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Workload, back); diff != "" {
		t.Errorf("workload after a JSON round trip (-parsed +decoded):\n%s", diff)
	}
	// Defaults: netperf's one byte each way, one pair.
	s, err = Parse("rr.yaml", []byte("name: rr\nworkload: {kind: tcp-rr}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = Workload{Kind: "tcp-rr", Pairs: 1, Params: &TCPRR{Request: 1, Response: 1}}
	if diff := cmp.Diff(want, s.Workload); diff != "" {
		t.Errorf("default workload (-want +got):\n%s", diff)
	}
}

func TestParseTCPRRScenarioErrors(t *testing.T) {
	tests := []struct{ name, workload, err string }{
		{"another kind's key", "{kind: tcp-rr, size: 64}", "size does not apply to workload kind tcp-rr"},
		{"too many pairs", "{kind: tcp-rr, pairs: 65}", "pairs must be from 1 to 64, got 65"},
		{"request too large", "{kind: tcp-rr, request: 2000000}", "request must be from 1 to 1048576, got 2000000"},
		{"nagle a string", "{kind: tcp-rr, nagle: yes-please}", `nagle must be true or false, got a string "yes-please"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("rr.yaml", []byte("name: rr\nworkload: "+tt.workload+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), "rr.yaml:2:") || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want rr.yaml:2:...: %s", err, tt.err)
			}
		})
	}
}

func TestTCPRRWorkloadCheck(t *testing.T) {
	tests := []struct {
		name string
		w    Workload
		err  string
	}{
		{"defaults", Workload{Kind: "tcp-rr"}, ""},
		{"sizes", Workload{Kind: "tcp-rr", Params: &TCPRR{Request: 10, Response: 1 << 20}}, ""},
		{"bad request", Workload{Kind: "tcp-rr", Params: &TCPRR{Request: -1}}, "request must be from 1 to 1048576 bytes, got -1"},
		{"bad pairs", Workload{Kind: "tcp-rr", Pairs: 100}, "pairs must be from 1 to 64, got 100"},
		{"another kind's field", Workload{Kind: "tcp-rr", Threads: 2}, "threads does not apply to workload kind tcp-rr"},
		{"another kind's params", Workload{Kind: "tcp-rr", Params: &struct{}{}}, "workload kind tcp-rr takes its parameters as *TCPRR, got *struct {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.withDefaults().check()
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
				t.Errorf("check: %v, want %q", err, tt.err)
			}
		})
	}
	// Defaults do not write through the caller's parameters.
	p := &TCPRR{Request: 5}
	w := Workload{Kind: "tcp-rr", Params: p}.withDefaults()
	if p.Response != 0 || w.Params.(*TCPRR).Response != DefaultTCPRRResponse {
		t.Errorf("defaults: caller's %+v, workload's %+v", *p, *w.Params.(*TCPRR))
	}
}
