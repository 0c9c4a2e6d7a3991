package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// cli runs tailgate in-process.
func cli(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// fakeRun describes a synthetic run: each trial's latencies lognormal
// around 20µs times its scale.
type fakeRun struct {
	scenario string
	params   string
	scales   []float64
	seed     uint64
	kernel   string
	// duration, when set, is recorded in the scenario's definition, as a
	// run records its trials' duration.
	duration time.Duration
}

func (f fakeRun) result() *result.Result {
	r := rand.New(rand.NewPCG(f.seed, 1))
	m := &result.Metric{Unit: "ns"}
	for _, scale := range f.scales {
		h := hist.New()
		for range 20000 {
			h.Record(uint64(20000 * scale * math.Exp(0.5*r.NormFloat64())))
		}
		m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h)})
	}
	if f.params == "" {
		f.params = "params-1"
	}
	if f.kernel == "" {
		f.kernel = "6.1.0-test"
	}
	var def json.RawMessage
	if f.duration > 0 {
		def = json.RawMessage(fmt.Sprintf(`{"name":%q,"workload":{"kind":"syscall","syscall":"read"},"tracers":{"syscall":{}},"duration":%d}`, f.scenario, f.duration))
		// A definition's digest is its parameters' (scenarios.CheckParams).
		var sc scenarios.Scenario
		if err := json.Unmarshal(def, &sc); err != nil {
			panic(err)
		}
		f.params = scenarios.Params(&sc)
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(int64(f.seed), 0),
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: f.kernel, CPUModel: "test cpu", CPUs: 2},
		Scenarios: []result.Scenario{{
			Name: f.scenario, Params: f.params, Definition: def, Trials: len(f.scales),
			Metrics: map[string]*result.Metric{"syscall.read": m},
		}},
	}
}

func (f fakeRun) write(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := result.Write(path, f.result()); err != nil {
		t.Fatal(err)
	}
	return path
}

var steady = []float64{1, 1.01, 0.99, 1, 1.005}

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	slow := fakeRun{scenario: "syscall-read", scales: []float64{1.4, 1.41, 1.39, 1.4, 1.4}, seed: 3}.write(t, dir, "slow.json")
	// The trials disagree wildly: a 15% shift the interval cannot confirm.
	wild := fakeRun{scenario: "syscall-read", scales: []float64{0.7, 1.6, 1.0}, seed: 4}.write(t, dir, "wild.json")
	other := fakeRun{scenario: "syscall-read", params: "params-2", scales: steady, seed: 5}.write(t, dir, "other.json")
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"schema": 1, "scenarios": [`), 0o644)
	future := filepath.Join(dir, "future.json")
	os.WriteFile(future, []byte(`{"schema": 7}`), 0o644)

	for _, c := range []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		stderrLine bool   // stderr is exactly one line
	}{
		{name: "no change", args: []string{base, same}, code: 0, stdout: "No regressions in 1 gated percentile"},
		{name: "regression", args: []string{base, slow}, code: 1, stdout: "REGRESSION", stderr: "regression in 1 gated"},
		{name: "regression below a raised threshold", args: []string{base, slow, "--threshold", "p50=50%", "--threshold", "p90=50%", "--threshold", "p99=50%", "--threshold", "p99.9=50%"}, code: 0},
		{name: "inconclusive passes", args: []string{base, wild, "--threshold", "p50=10%"}, code: 0, stdout: "inconclusive"},
		{name: "inconclusive fails strict", args: []string{base, wild, "--threshold", "p50=10%", "--strict"}, code: 1, stderr: "fail --strict"},
		{name: "params differ", args: []string{base, other}, code: 2, stderr: "scenario parameters differ", stderrLine: true},
		{name: "params differ forced", args: []string{base, other, "--force"}, code: 0, stdout: "compared because forced"},
		{name: "corrupt", args: []string{corrupt, same}, code: 2, stderr: "baseline: " + corrupt, stderrLine: true},
		{name: "future schema", args: []string{base, future}, code: 2, stderr: "upgrade tailgate", stderrLine: true},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json"), same}, code: 2, stderrLine: true},
		{name: "one argument", args: []string{base}, code: 2, stderr: "want BASE and NEW", stderrLine: true},
		{name: "bad flag", args: []string{base, same, "--frobnicate"}, code: 2, stderr: "flag provided but not defined", stderrLine: true},
		{name: "bad threshold", args: []string{base, same, "--threshold", "p100=5%"}, code: 2, stderr: `unknown percentile "p100"`, stderrLine: true},
		{name: "bad format", args: []string{base, same, "--format", "pdf"}, code: 2, stderr: `unknown format "pdf"`, stderrLine: true},
		{name: "two formats on stdout", args: []string{base, same, "--format", "json", "--format", "text"}, code: 2, stderr: "2 formats would go to stdout", stderrLine: true},
		{name: "json", args: []string{base, slow, "--format", "json"}, code: 1, stdout: `"verdict": "regression"`},
		{name: "help", args: []string{"-h"}, code: 0, stdout: "usage: tailgate compare"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(append([]string{"compare"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			// A warning wraps at the report's width: read its lines joined.
			if !strings.Contains(strings.Join(strings.Fields(stdout), " "), c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, stdout)
			}
			if !strings.Contains(stderr, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, stderr)
			}
			if c.stderrLine && strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", stderr)
			}
		})
	}
}

// TestCompareNamesDifferingParams: runs of different trial durations are
// refused (exit 2) in one line that names the field and both values, not
// the two digests; forced, the warning names them too.
func TestCompareNamesDifferingParams(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", params: "243b61c9aa69f00d", scales: steady, seed: 1, duration: 500 * time.Millisecond}.write(t, dir, "base.json")
	short := fakeRun{scenario: "syscall-read", params: "82f4850ec743f00d", scales: steady, seed: 2, duration: 200 * time.Millisecond}.write(t, dir, "short.json")
	const want = "duration 500ms (baseline) vs 200ms (candidate)"
	code, stdout, stderr := cli("compare", base, short)
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "syscall-read: "+want) {
		t.Errorf("exit %d, want 2 and one line naming %q:\n%s%s", code, want, stdout, stderr)
	}
	if strings.Contains(stderr, "243b61c9aa69") || strings.Contains(stderr, "82f4850ec743") {
		t.Errorf("the error names the digests, not what differs: %s", stderr)
	}
	code, stdout, stderr = cli("compare", base, short, "--force")
	if code != 0 || !strings.Contains(stdout, "parameters differ: "+want+"; compared because forced") {
		t.Errorf("forced: exit %d, want 0 and the fields in the warning:\n%s%s", code, stdout, stderr)
	}
}

func TestCompareOutputs(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	slow := fakeRun{scenario: "syscall-read", scales: []float64{1.4, 1.41, 1.39, 1.4, 1.4}, seed: 3}.write(t, dir, "slow.json")
	md, junit, js := filepath.Join(dir, "summary.md"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "verdicts.json")
	code, stdout, stderr := cli("compare", base, slow, "--format", "text", "--format", "markdown="+md, "--format", "junit="+junit, "--format", "json="+js)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "REGRESSION") {
		t.Errorf("text report not on stdout:\n%s", stdout)
	}
	for path, want := range map[string]string{
		md:    "1 regression in 1 gated percentile.",
		junit: `<failure message="syscall.read p99`,
		js:    `"headline": "1 regression in 1 gated percentile."`,
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%s", path, want, b)
		}
	}
	out := filepath.Join(dir, "out.json")
	if code, stdout, _ := cli("compare", base, slow, "--format", "json", "--output", out); code != 1 || stdout != "" || !strings.Contains(mustRead(t, out), `"verdict"`) {
		t.Errorf("--output: exit %d, stdout %q", code, stdout)
	}
	if first, _, _ := strings.Cut(mustRead(t, md), "\n"); first != "1 regression in 1 gated percentile." {
		t.Errorf("markdown first line %q", first)
	}
}

func TestCompareBaselineDir(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	if code, _, stderr := cli("baseline", "save", base, store); code != 0 {
		t.Fatalf("baseline save: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := cli("compare", store, same)
	if code != 0 || !strings.Contains(stdout, "No regressions") {
		t.Errorf("compare against a baseline directory: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestBaselineShow(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	for i, name := range []string{"syscall-read", "pipe-pingpong"} {
		path := fakeRun{scenario: name, scales: steady, seed: uint64(i + 1)}.write(t, dir, name+".json")
		if code, _, stderr := cli("baseline", "save", path, store); code != 0 {
			t.Fatalf("baseline save: exit %d: %s", code, stderr)
		}
	}
	code, stdout, stderr := cli("baseline", "show", store)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"pipe-pingpong", "syscall-read", "6.1.0-test", "syscall.read", "100000", "µs"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}
	// A corrupt file: the readable ones are still listed, and exit 2.
	bad := filepath.Join(store, "fork-exit@host-6.1.0-test.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	code, stdout, stderr = cli("baseline", "show", store)
	if code != 2 || !strings.Contains(stdout, "syscall-read") || !strings.Contains(stderr, bad) {
		t.Errorf("corrupt store: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// save refuses to replace it.
	path := fakeRun{scenario: "fork-exit", scales: steady, seed: 9}.write(t, dir, "fork.json")
	if code, _, stderr := cli("baseline", "save", path, store); code != 2 || !strings.Contains(stderr, "refusing") {
		t.Errorf("save over corrupt: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli("baseline", "save", path, store, "--replace-unreadable"); code != 0 {
		t.Errorf("save --replace-unreadable: exit %d: %s", code, stderr)
	}
	if code, _, _ := cli("baseline", "frob"); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two clocks are not compared: a Result in virtual time against one in
// real time is bad input, said in one line, whichever is the baseline;
// and a stored baseline of another clock is refused before the run.
func TestCompareRefusesTwoClocks(t *testing.T) {
	dir := t.TempDir()
	shift := 0
	virtual := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result()
	virtual.Target = result.Target{Name: "6.1-cloud", Kind: "vm", Accel: "tcg", VCPUs: 1, Clock: result.ClockVirtual, IcountShift: &shift}
	real := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.result()
	real.Target = result.Target{Name: "6.1-cloud", Kind: "vm", Accel: "tcg", VCPUs: 2}
	v, r := filepath.Join(dir, "v.json"), filepath.Join(dir, "r.json")
	if err := result.Write(v, virtual); err != nil {
		t.Fatal(err)
	}
	if err := result.Write(r, real); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{v, r}, {r, v}} {
		code, _, stderr := cli("compare", args[0], args[1])
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "clocks differ") {
			t.Errorf("compare %s %s: exit %d, want 2 with one line saying the clocks differ: %q", filepath.Base(args[0]), filepath.Base(args[1]), code, stderr)
		}
	}

	store := filepath.Join(dir, "baselines")
	if code, _, stderr := cli("baseline", "save", r, store); code != 0 {
		t.Fatalf("baseline save: exit %d: %s", code, stderr)
	}
	calls := stubRunner(t)
	code, _, stderr := cli("gate", "syscall-read", "--baseline", store, "--target", "6.1-cloud", "--targets", writeTargets(t, dir), "--clock", "virtual")
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "ran in real time and this run is in virtual time") || *calls != 0 {
		t.Errorf("gate against a baseline in real time, in virtual time: exit %d, %d runs, want 2 with one line before any run: %q", code, *calls, stderr)
	}
}

// writeTargets writes a targets file naming 6.1-cloud, a TCG VM, and
// returns its path.
func writeTargets(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(p, []byte("targets:\n  - name: 6.1-cloud\n    kernel: debian:6.1-cloud\n    accel: tcg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareVerbose: compare's text shows the gated rows and counts the
// others; -v shows them all.
func TestCompareVerbose(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 5}.write(t, dir, "base.json")
	head := fakeRun{scenario: "syscall-read", scales: steady, seed: 6}.write(t, dir, "head.json")
	_, quiet, _ := cli("compare", base, head)
	_, verbose, _ := cli("compare", base, head, "-v")
	if !strings.Contains(quiet, "| p99 ") && !strings.Contains(quiet, "p99 ") || strings.Contains(quiet, "not gated |") || !strings.Contains(quiet, "-v shows ") {
		t.Errorf("compare: want the gated rows and a -v shows line:\n%s", quiet)
	}
	if !strings.Contains(verbose, "not gated") || strings.Contains(verbose, "-v shows ") {
		t.Errorf("compare -v: want every row:\n%s", verbose)
	}
}
