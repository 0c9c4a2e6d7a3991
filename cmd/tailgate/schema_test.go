package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// schema compiles docs/NAME.schema.json.
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(filepath.Join("..", "..", "docs", name+".schema.json"))
	if err != nil {
		t.Fatalf("docs/%s.schema.json: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, path string) error {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s.Validate(doc)
}

// TestSchemasValidateRealOutputs runs syscall-read twice on this kernel,
// compares the two Results, and checks the Results and the comparison
// against the JSON Schemas in docs/, as other tools would read them.
func TestSchemasValidateRealOutputs(t *testing.T) {
	resultSchema, compareSchema := schema(t, "result"), schema(t, "compare")
	dir := t.TempDir()
	var results []string
	for _, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		code, stdout, stderr := runInProcess(t, "run", "syscall-read", "--trials", "2", "--duration", "100ms", "--warmup", "0s", "-o", out)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		results = append(results, out)
	}
	// Synthetic ones too: fields a host run leaves out.
	results = append(results, fakeRun{scenario: "syscall-read", scales: steady, seed: 1, kernel: "6.1.0-test"}.write(t, dir, "fake.json"))
	// And what only some tracers record: ufunc's probes, request's hooks.
	traced := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.result()
	traced.Scenarios[0].Tracers = []result.TracerInfo{
		{Name: "ufunc", Variant: "uprobe", Probes: []result.Probe{{Symbol: "main.handle", Offset: 4, Insn: "53", Mnemonic: "push", SingleStepped: true}}},
		{Name: "request", Variant: "tp_btf", Hooks: []string{"sock_recv_length", "sock_send_length"}},
	}
	tracedPath := filepath.Join(dir, "traced.json")
	if err := result.Write(tracedPath, traced); err != nil {
		t.Fatal(err)
	}
	results = append(results, tracedPath)
	for _, r := range results {
		if err := validate(t, resultSchema, r); err != nil {
			t.Errorf("%s against docs/result.schema.json: %v", filepath.Base(r), err)
		}
	}
	cmpOut := filepath.Join(dir, "compare.json")
	if code, _, stderr := cli("compare", results[0], results[1], "--format", "json="+cmpOut); code != exitPass && code != exitRegression {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, c := range []string{cmpOut, filepath.Join("..", "..", "testdata", "report", "json.golden")} {
		if err := validate(t, compareSchema, c); err != nil {
			t.Errorf("%s against docs/compare.schema.json: %v", filepath.Base(c), err)
		}
	}

	// The schemas are not vacuous: a field they do not know, a Result
	// given as a comparison, a future schema.
	bad := filepath.Join(dir, "bad.json")
	b, _ := os.ReadFile(results[0])
	os.WriteFile(bad, bytes.Replace(b, []byte(`"schema": 1`), []byte(`"schema": 1, "surprise": true`), 1), 0o644)
	if err := validate(t, resultSchema, bad); err == nil || !strings.Contains(err.Error(), "surprise") {
		t.Errorf("an unknown field passes: %v", err)
	}
	if err := validate(t, compareSchema, results[0]); err == nil {
		t.Error("a Result passes as a comparison")
	}
	os.WriteFile(bad, bytes.Replace(b, []byte(`"schema": 1`), []byte(`"schema": 2`), 1), 0o644)
	if err := validate(t, resultSchema, bad); err == nil {
		t.Error("schema 2 passes as schema 1")
	}
}
