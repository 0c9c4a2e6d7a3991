package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// wantParseError checks that err is a *ParseError at line:col whose
// message contains msg.
func wantParseError(t *testing.T, err error, line, col int, msg string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *ParseError", err, err)
	}
	if pe.Line != line || pe.Column != col || !strings.Contains(pe.Msg, msg) {
		t.Errorf("error %q, want at %d:%d containing %q", err, line, col, msg)
	}
}

// TestUnknownTracerAndKeys checks, for the registry as it is, that an
// unknown tracer and an unknown key of each tracer and of each workload
// kind are errors at the key, with file:line:column.
func TestUnknownTracerAndKeys(t *testing.T) {
	const head = "name: s\nworkload: {kind: syscall}\ntracers:\n"
	_, err := Parse("x.yaml", []byte(head+"  syscall: {}\n  nosuch: {}\n"))
	wantParseError(t, err, 5, 3, `unknown key "nosuch" in tracers; allowed: `+strings.Join(tracers.Names(), ", "))
	if !strings.HasPrefix(err.Error(), "x.yaml:5:3: ") {
		t.Errorf("error %q does not start with x.yaml:5:3: ", err)
	}
	for _, k := range tracers.All {
		t.Run("tracer "+k.Name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(head+"  "+k.Name+":\n    nosuchkey: 1\n"))
			wantParseError(t, err, 5, 5, `"nosuchkey"`)
		})
	}
	for _, k := range workloadKinds {
		t.Run("workload "+k.Name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte("name: s\nworkload:\n  kind: "+k.Name+"\n  nosuchkey: 1\ntracers: {sched: {}}\n"))
			wantParseError(t, err, 4, 3, `unknown key "nosuchkey" in workload`)
		})
	}
}

// TestScenarioJSONRoundTrip checks that a scenario survives the JSON a
// Result's definition and a trial worker's request carry it in.
func TestScenarioJSONRoundTrip(t *testing.T) {
	for _, s := range Builtin() {
		t.Run(s.Name, func(t *testing.T) {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var got Scenario
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s, &got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if Params(&got) != Params(s) {
				t.Errorf("Params changed in the round trip")
			}
		})
	}
	var s Scenario
	if err := json.Unmarshal([]byte(`{"tracers":{"nosuch":{}}}`), &s); err == nil || !strings.Contains(err.Error(), `unknown tracer "nosuch"`) {
		t.Errorf("unknown tracer in JSON: err = %v", err)
	}
}

// echoParams are the parameters of echoKind, a kind with a key of its
// own, as an exec kind has.
type echoParams struct {
	Message string `json:"message"`
}

var echoKind = WorkloadKind{
	Name: "echo",
	Keys: []string{"message"},
	Parse: func(at config.Node, fs []config.Field) (any, error) {
		p := &echoParams{}
		for _, f := range fs {
			var err error
			if p.Message, err = f.String(); err != nil {
				return nil, err
			}
		}
		if p.Message == "" {
			return nil, at.Errorf("echo needs a message")
		}
		return p, nil
	},
	DecodeParams: func(b []byte) (any, error) {
		p := &echoParams{}
		return p, json.Unmarshal(b, p)
	},
	New: newNoiseKind,
}

// TestWorkloadKindOwnParams registers a kind with a key of its own, as a
// new kind's file does, and checks parsing, errors and JSON.
func TestWorkloadKindOwnParams(t *testing.T) {
	saved := workloadKinds
	workloadKinds = append(slices.Clone(saved), echoKind)
	t.Cleanup(func() { workloadKinds = saved })

	s, err := Parse("x.yaml", []byte("name: e\nworkload: {kind: echo, message: hi, noise: 2}\ntracers: {sched: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Kind: "echo", Noise: 2, Params: &echoParams{Message: "hi"}}
	if diff := cmp.Diff(want, s.Workload); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(s.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"kind":"echo","noise":2,"message":"hi"}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	_, err = Parse("x.yaml", []byte("name: e\nworkload:\n  kind: echo\n  threads: 2\ntracers: {sched: {}}\n"))
	wantParseError(t, err, 4, 3, "threads does not apply to workload kind echo; echo takes: message, noise")
	_, err = Parse("x.yaml", []byte("name: e\nworkload:\n  kind: syscall\n  message: hi\ntracers: {sched: {}}\n"))
	wantParseError(t, err, 4, 3, "message does not apply to workload kind syscall")
	_, err = Parse("x.yaml", []byte("name: e\nworkload:\n  kind: echo\n  message: [a]\ntracers: {sched: {}}\n"))
	wantParseError(t, err, 4, 12, "message must be a string")
	_, err = Parse("x.yaml", []byte("name: e\nworkload:\n  kind: echo\ntracers: {sched: {}}\n"))
	wantParseError(t, err, 2, 1, "echo needs a message")
}

// TestLookupAllStopsAtWhatAResultHolds: a run of more scenarios than a
// Result holds would write one no reader takes; it is refused before any
// is read.
func TestLookupAllStopsAtWhatAResultHolds(t *testing.T) {
	names := make([]string, result.MaxScenarios+1)
	for i := range names {
		names[i] = fmt.Sprintf("/nonexistent/s%d.yaml", i)
	}
	_, err := LookupAll(names)
	if err == nil || !strings.Contains(err.Error(), "257 scenarios named; a run holds at most 256") {
		t.Errorf("LookupAll of 257 names: %v", err)
	}
}

// TestCheckParams: a Result's params must be its definition's digest.
func TestCheckParams(t *testing.T) {
	sc, err := Lookup("syscall-read")
	if err != nil {
		t.Fatal(err)
	}
	def, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Scenarios: []result.Scenario{{Name: sc.Name, Definition: def, Params: Params(sc)}}}
	if err := CheckParams(r); err != nil {
		t.Errorf("a run's own params: %v", err)
	}
	r.Scenarios[0].Params = Params(&Scenario{Duration: time.Second})
	if err := CheckParams(r); !errors.Is(err, result.ErrCorrupt) || !strings.Contains(err.Error(), `scenario "syscall-read": its params`) {
		t.Errorf("another scenario's params: %v", err)
	}
	r.Scenarios[0].Definition = json.RawMessage(`{"tracers":{"nonesuch":{}}}`)
	if err := CheckParams(r); !errors.Is(err, result.ErrCorrupt) || !strings.Contains(err.Error(), "does not read as a scenario") {
		t.Errorf("a definition that is no scenario: %v", err)
	}
	r.Scenarios[0].Definition = nil
	if err := CheckParams(r); err != nil {
		t.Errorf("no definition to check against: %v", err)
	}
}
