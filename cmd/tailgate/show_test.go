package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShow(t *testing.T) {
	dir := t.TempDir()
	res := fakeRun{scenario: "syscall-read", scales: steady, seed: 5}.write(t, dir, "r.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show", res}, "syscall-read syscall.read (5 trials, "},
		{[]string{"show", res, "--linear", "0:100us:10us"}, "[10000, 20000)"},
		{[]string{"show", "--format", "json", res}, `"schema": 1`},
		{[]string{"show", "--format", "csv", res}, "scenario,metric,gated,trial,count,p50_ns"},
		{[]string{"show", "--format", "openmetrics", res}, "# TYPE tailgate_latency_seconds histogram"},
		{[]string{"show", "--format", "benchstat", res}, "BenchmarkSyscallRead/syscall.read/p99 1 "},
	} {
		code, stdout, stderr := cli(tc.args...)
		if code != exitPass || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: exit %d, want 0 and %q in:\n%s\nstderr: %s", tc.args, code, tc.want, stdout, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "name one Result file"},
		{[]string{"show", res, "--format", "xml"}, `--format: format "xml": want text, json, csv, openmetrics, benchstat, github-action-benchmark, bencher`},
		{[]string{"show", res, "--format", "csv", "--linear", "0:1us:100ns"}, "--linear draws text rows; --format csv would ignore it"},
		{[]string{"show", res, "--linear", "0:1us"}, "want MIN:MAX:STEP"},
		{[]string{"show", res, "--linear", "0:1s:1ns"}, "at most 1000"},
		{[]string{"show", filepath.Join(dir, "missing.json")}, "result: "},
	} {
		code, _, stderr := cli(tc.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and one line with %q: %q", tc.args, code, tc.want, stderr)
		}
	}
}

// TestShowOtherDocuments checks show, given a JSON document tailgate
// writes that is not a Result, says what it is and what reads it.
func TestShowOtherDocuments(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 5}.write(t, dir, "base.json")
	head := fakeRun{scenario: "syscall-read", scales: steady, seed: 6}.write(t, dir, "head.json")
	report := filepath.Join(dir, "report.json")
	if code, _, stderr := cli("compare", base, head, "--format", "json="+report); code > 1 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	code, shown, stderr := cli("show", "--format", "json", base)
	if code != exitPass {
		t.Fatalf("show --format json: exit %d: %s", code, stderr)
	}
	shownPath := filepath.Join(dir, "shown.json")
	os.WriteFile(shownPath, []byte(shown), 0o644)
	code, catalog, stderr := cli("list", "--format", "json")
	if code != exitPass {
		t.Fatalf("list --format json: exit %d: %s", code, stderr)
	}
	catalogPath := filepath.Join(dir, "catalog.json")
	os.WriteFile(catalogPath, []byte(catalog), 0o644)
	for _, tc := range []struct{ path, want string }{
		{report, "is a comparison report (gate or compare --format json; docs/compare.schema.json), not a Result: a gate's Results are what its -o FILE wrote"},
		{shownPath, "is what show --format json writes"},
		{catalogPath, "is tailgate list's catalog"},
	} {
		code, _, stderr := cli("show", tc.path)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("show %s: exit %d, want 2 and one line with %q: %q", filepath.Base(tc.path), code, tc.want, stderr)
		}
	}
}
