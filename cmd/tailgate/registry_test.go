package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
)

// TestRegistryBadInput checks that an unknown tracer, an unknown key of a
// registered tracer and an unknown workload key are exit 2 with one line
// naming file:line:column, before anything runs.
func TestRegistryBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml, where, msg string
	}{
		{"unknown tracer", "name: s\nworkload: {kind: syscall}\ntracers:\n  nosuch: {}\n", ":4:3: ", `unknown key "nosuch" in tracers`},
		{"unknown workload key", "name: s\nworkload:\n  kind: syscall\n  nosuch: 1\ntracers: {sched: {}}\n", ":4:3: ", `unknown key "nosuch" in workload`},
	}
	for _, k := range tracers.All {
		tests = append(tests, struct{ name, yaml, where, msg string }{
			"unknown key of " + k.Name, "name: s\nworkload: {kind: syscall}\ntracers:\n  " + k.Name + ": {nosuchkey: 1}\n", ":4:", `"nosuchkey"`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runInProcess(t, "run", path, "-o", filepath.Join(dir, "out.json"))
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, path+tt.where) || !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr %q, want %s%s... %s", stderr, path, tt.where, tt.msg)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}
