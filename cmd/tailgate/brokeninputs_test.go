package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// writeResult writes r to dir/name and returns the path.
func writeResult(t *testing.T, dir, name string, r *result.Result) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := result.Write(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEmptyCandidateNeverPasses: a candidate with no scenarios, or with
// only scenarios its run skipped, is a broken run (exit 3) against a
// baseline file or directory, in gate and compare alike, and nothing is
// said about saving it. Once, gate passed it and said it was now the
// baseline, with nothing saved.
func TestEmptyCandidateNeverPasses(t *testing.T) {
	dir := t.TempDir()
	good := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}
	goodPath := good.write(t, dir, "good.json")
	store := filepath.Join(dir, "store")
	if code, _, stderr := cli("baseline", "save", goodPath, store); code != 0 {
		t.Fatalf("baseline save: exit %d\n%s", code, stderr)
	}
	none := good.result()
	none.Scenarios = nil
	skipped := good.result()
	skipped.Scenarios = nil
	skipped.Skipped = []result.Skipped{{Scenario: "kfunc-vfs-read", Reason: "kfunc: not supported"}}
	for _, tc := range []struct {
		name string
		r    *result.Result
		why  string
	}{
		{"no scenarios", none, "it has no scenarios"},
		{"only skipped", skipped, "skipped every scenario (kfunc-vfs-read)"},
	} {
		cand := writeResult(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".json", tc.r)
		for _, args := range [][]string{
			{"gate", "--candidate", cand, "--baseline", goodPath},
			{"gate", "--candidate", cand, "--baseline", store},
			{"compare", goodPath, cand},
			{"compare", store, cand},
		} {
			code, stdout, stderr := cli(args...)
			if code != exitInfra || !strings.Contains(stderr, tc.why) || strings.Contains(stdout+stderr, "Pass") || strings.Contains(stdout+stderr, "now the baseline") {
				t.Errorf("%s: tailgate %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 3 saying %q, and no pass", tc.name, strings.Join(args[:1], " "), code, stdout, stderr, tc.why)
			}
		}
	}
}

// TestBaselineGatingNothingRefused: a baseline whose own gate policy
// gates a metric it lacks, or nothing at all (an empty gate block, a
// metric with no percentile), is refused by baseline save and, stored
// all the same, at gate and compare time (exit 2), before a run; a
// candidate twice as slow must never pass it. Once, each gave "No
// regressions in 0 gated percentiles".
func TestBaselineGatingNothingRefused(t *testing.T) {
	slow := fakeRun{scenario: "syscall-read", scales: []float64{2, 2.01, 1.99, 2, 2}, seed: 9}
	for _, tc := range []struct {
		name  string
		spoil func(s *result.Scenario)
		why   string
	}{
		{"gated metric deleted", func(s *result.Scenario) {
			s.Metrics["sched.runq"] = s.Metrics["syscall.read"]
			delete(s.Metrics, "syscall.read")
		}, "gates syscall.read, which it has not measured"},
		{"empty gate block", func(s *result.Scenario) { s.Gate = result.GatePolicy{"": nil} }, "has an empty gate block"},
		{"metric without percentiles", func(s *result.Scenario) { s.Gate = result.GatePolicy{"syscall.read": {}} }, "gates syscall.read at no percentile"},
		{"no such percentile", func(s *result.Scenario) { s.Gate = result.GatePolicy{"syscall.read": {"p200": 0.1}} }, `gates syscall.read at "p200"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			slowPath := slow.write(t, dir, "slow.json")
			base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result()
			base.Scenarios[0].Gate = result.GatePolicy{"syscall.read": {"p99": 0.1}}
			tc.spoil(&base.Scenarios[0])
			b, err := result.Marshal(base)
			if err != nil {
				t.Fatal(err)
			}
			// An empty gate block: omitempty would leave it out.
			b = bytes.Replace(b, []byte(`"gate": {
        "": null
      },`), []byte(`"gate": {},`), 1)
			basePath := filepath.Join(dir, "base.json")
			store := filepath.Join(dir, "store")
			if err := os.MkdirAll(store, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{basePath, filepath.Join(store, "syscall-read@host-6.1.0-test.json")} {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, _, stderr := cli("baseline", "save", basePath, filepath.Join(dir, "new-store"))
			if code != exitUsage || !strings.Contains(stderr, tc.why) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("baseline save: exit %d, stderr %q; want 2 and one line saying %q", code, stderr, tc.why)
			}
			// The store holds it all the same: stored by hand, or by an
			// older tailgate.
			for _, args := range [][]string{
				{"gate", "--candidate", slowPath, "--baseline", store},
				{"gate", "--candidate", slowPath, "--baseline", basePath},
				{"compare", basePath, slowPath},
				{"compare", store, slowPath},
			} {
				code, stdout, stderr := cli(args...)
				if code != exitUsage || !strings.Contains(stderr, tc.why) || strings.Contains(stdout, "No regressions") {
					t.Errorf("tailgate %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 saying %q", strings.Join(args, " "), code, stdout, stderr, tc.why)
				}
			}
			stubRunner(t) // refused before any run
			if code, _, stderr := cli("gate", "syscall-read", "--baseline", store); code != exitUsage || !strings.Contains(stderr, tc.why) {
				t.Errorf("gate of a run: exit %d, stderr %q; want 2 before the run", code, stderr)
			}
		})
	}
}

// commandLines returns the lines of out that GitHub's runner would read
// as a workflow command, or that carry a control character other than a
// tab.
func commandLines(out string) []string {
	var bad []string
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##[") || strings.ContainsFunc(line, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) {
			bad = append(bad, line)
		}
	}
	return bad
}

// TestResultTextCannotInjectCommands: Result fields holding a line break
// and a workflow command, or terminal escapes, reach no output a CI log
// shows raw: not the text report on standard output or in a file, not
// the error and warning lines on standard error, not show. A kernel
// release so made is refused as a name is (exit 2, its error escaped);
// free text (a CPU model, a run's error) is escaped where it is shown.
// Once, compare printed a line "::error::pwned" from a kernel release.
func TestResultTextCannotInjectCommands(t *testing.T) {
	dir := t.TempDir()
	release := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result()
	release.Environment.KernelRelease = "6.1\n::error::pwned\r::warning::x\n  ##[error]y \x1b[2J\u202e"
	releasePath := writeResult(t, dir, "release.json", release)
	evil := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result()
	evil.Environment.CPUModel = "cpu\n::add-mask::z\r::error::w \x1b[2J\u202e"
	evil.Partial, evil.Error = true, "oops\n::error title=t::partial"
	evilPath := writeResult(t, dir, "evil.json", evil)
	good := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}
	goodPath := good.write(t, dir, "good.json")
	slow := fakeRun{scenario: "syscall-read", scales: []float64{2, 2, 2, 2, 2}, seed: 3}.result()
	slow.Environment = evil.Environment
	slowPath := writeResult(t, dir, "slow.json", slow)
	report := filepath.Join(dir, "report.txt")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"compare", releasePath, releasePath}, exitUsage},
		{[]string{"gate", "--candidate", releasePath, "--baseline", goodPath}, exitUsage},
		{[]string{"compare", evilPath, evilPath}, exitPass},
		{[]string{"compare", goodPath, slowPath, "--format", "text=" + report}, exitRegression},
		{[]string{"gate", "--candidate", slowPath, "--baseline", goodPath}, exitRegression},
		{[]string{"gate", "--candidate", evilPath, "--baseline", goodPath}, exitPass},
		{[]string{"show", evilPath}, exitPass},
		{[]string{"baseline", "show", evilPath}, exitPass},
	} {
		code, stdout, stderr := cli(tc.args...)
		if bad := commandLines(stdout + "\n" + stderr); len(bad) > 0 || code != tc.code {
			t.Errorf("tailgate %s: exit %d (want %d), printed lines a CI log would act on: %q", strings.Join(tc.args, " "), code, tc.code, bad)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if bad := commandLines(string(b)); len(bad) > 0 || !strings.Contains(string(b), `cpu\n::add-mask::z\r::error::w \x1b[2J\u202e`) {
		t.Errorf("text report file: lines %q; want the CPU model escaped, on one line:\n%s", bad, b)
	}
}

// TestCompareBoundedAndInterruptible: --resamples has a ceiling (exit 2
// past it, in one line), and a compare at the ceiling returns at once,
// exit 3, when it is interrupted. Once, 1000000000 resamples were taken,
// and SIGINT and SIGTERM were not heeded for ten minutes.
func TestCompareBoundedAndInterruptible(t *testing.T) {
	dir := t.TempDir()
	// 60 trials: at 100000 resamples, seconds of bootstrap here.
	scales := make([]float64, 60)
	for i := range scales {
		scales[i] = 1
	}
	a := fakeRun{scenario: "syscall-read", scales: scales, seed: 1}.write(t, dir, "a.json")
	b := fakeRun{scenario: "syscall-read", scales: scales, seed: 2}.write(t, dir, "b.json")
	code, _, stderr := cli("compare", a, b, "--resamples", "1000000000")
	if code != exitUsage || !strings.Contains(stderr, "want a number from 1 to 100000") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("--resamples 1000000000: exit %d, stderr %q; want 2 and one line giving the range", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // as SIGINT or SIGTERM cancel main's
	start := time.Now()
	var o, e bytes.Buffer
	code = run(ctx, []string{"compare", a, b, "--resamples", "100000"}, &o, &e)
	took := time.Since(start)
	if code != exitInfra || !strings.Contains(e.String(), "interrupted") || took > 2*time.Second {
		t.Errorf("interrupted compare: exit %d after %v, stderr %q; want 3 at once, saying so", code, took, e.String())
	}
}

// TestForgedResultsRefusedEverywhere: one reader checks every Result
// tailgate takes, as strictly as a guest's reply: a forged summary, a
// scenario twice, a key twice, a name with a line break or too long are
// exit 2 in show, merge, compare, gate, baseline save and history add,
// before anything is written. Once, show printed a forged p99 and
// baseline save failed on a long name with exit 3.
func TestForgedResultsRefusedEverywhere(t *testing.T) {
	dir := t.TempDir()
	goodRun := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}
	good := goodRun.write(t, dir, "good.json")
	forge := func(name string, f func(r *result.Result)) string {
		r := goodRun.result()
		f(r)
		return writeResult(t, dir, name, r)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dupKey := filepath.Join(dir, "dupkey.json")
	os.WriteFile(dupKey, bytes.Replace(b, []byte(`"schema": 1,`), []byte(`"schema": 1, "schema": 1,`), 1), 0o644)
	for _, tc := range []struct {
		path, want string
	}{
		{forge("p99.json", func(r *result.Result) { r.Scenarios[0].Metrics["syscall.read"].Trials[0].Summary.P99 = 1.7e308 }), "is not its histogram's"},
		{forge("twice.json", func(r *result.Result) { r.Scenarios = append(r.Scenarios, r.Scenarios[0]) }), "appears twice"},
		{forge("newline.json", func(r *result.Result) { r.Scenarios[0].Name = "a\n::error::b" }), "holds a control character"},
		{forge("long.json", func(r *result.Result) { r.Scenarios[0].Name = strings.Repeat("s", 300) }), "the limit is 64"},
		{dupKey, `key "schema" appears twice`},
		{forge("copies.json", func(r *result.Result) {
			m := r.Scenarios[0].Metrics["syscall.read"]
			m.Trials = m.Trials[:1]
			for range 9 {
				m.Trials = append(m.Trials, m.Trials[0])
			}
		}), "trial 2 is a copy of trial 1"},
	} {
		for _, args := range [][]string{
			{"show", tc.path, "--format", "csv"},
			{"merge", good, tc.path, "-o", filepath.Join(dir, "merged.json")},
			{"compare", good, tc.path},
			{"gate", "--candidate", tc.path, "--baseline", good},
			{"baseline", "save", tc.path, filepath.Join(dir, "store")},
			{"history", "add", filepath.Join(dir, "history"), tc.path, "--commit", strings.Repeat("ab", 20)},
		} {
			code, stdout, stderr := cli(args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stdout, "1.7e+308") {
				t.Errorf("tailgate %s: exit %d, stderr %q; want 2 saying %q", strings.Join(args, " "), code, stderr, tc.want)
			}
		}
	}
	for _, p := range []string{"merged.json", "store", "history"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s written from a forged Result", p)
		}
	}
}

// TestHistoryRefusesWhatHidesACommit: history add files a record under a
// whole commit id only; history changes warns, as check does, of a
// record that is gone or edited, though it reads the summaries; an index
// path outside the store is a corrupt store (exit 2), not a file read.
func TestHistoryRefusesWhatHidesACommit(t *testing.T) {
	store, commits := historyOfRealTrials(t, false)
	good := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, t.TempDir(), "good.json")
	if code, _, stderr := historyRun(t, "add", store, good, "--commit", commits[0][:7]); code != exitUsage || !strings.Contains(stderr, "not a whole commit id") {
		t.Errorf("history add --commit %s: exit %d, stderr %q; want 2 asking for the whole id", commits[0][:7], code, stderr)
	}
	ixPath := filepath.Join(store, "tailgate-history.json")
	ix, err := os.ReadFile(ixPath)
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Entries []struct{ Path string } `json:"entries"`
	}
	if err := json.Unmarshal(ix, &index); err != nil || len(index.Entries) != 12 {
		t.Fatalf("index: %v, %d entries", err, len(index.Entries))
	}
	gone, edited := index.Entries[2].Path, index.Entries[9].Path
	os.Remove(filepath.Join(store, gone))
	b, _ := os.ReadFile(filepath.Join(store, edited))
	os.WriteFile(filepath.Join(store, edited), bytes.Replace(b, []byte(`"format"`), []byte(` "format"`), 1), 0o644)
	code, _, stderr := historyRun(t, "changes", store)
	if code != exitPass || !strings.Contains(stderr, gone+": history store is corrupt: the index lists it but it is missing") ||
		!strings.Contains(stderr, edited+": history store is corrupt:") || !strings.Contains(stderr, "run tailgate history check") {
		t.Errorf("history changes of a store with a record gone and one edited: exit %d, stderr:\n%s\nwant warnings naming both", code, stderr)
	}
	os.WriteFile(ixPath, bytes.Replace(ix, []byte(`"path": "`+index.Entries[0].Path+`"`), []byte(`"path": "../../../../../etc/passwd"`), 1), 0o644)
	for _, sub := range []string{"check", "changes"} {
		code, stdout, stderr := historyRun(t, sub, store)
		if code != exitUsage || !strings.Contains(stderr, "../../../../../etc/passwd") || strings.Contains(stdout+stderr, "root:") {
			t.Errorf("history %s of an index naming /etc/passwd: exit %d\nstdout:\n%s\nstderr:\n%s", sub, code, stdout, stderr)
		}
	}
}

// TestLimitsFoundBeforeAnyRun: what would fail later is exit 2 before
// anything runs: a syscall tracer of more than 16 syscalls (once exit 3
// at attach, after the verifier), a variant or target name too long for
// the file names it makes (once exit 3 in baseline save, after the run).
func TestLimitsFoundBeforeAnyRun(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "many.yaml")
	names := []string{"read", "write", "openat", "close", "getpid", "getppid", "getuid", "getgid", "geteuid", "getegid", "gettid", "sched_yield", "uname", "umask", "sync", "pause", "alarm"}
	doc := "name: many\nworkload: {kind: timer, interval: 1ms}\ntracers:\n  syscall: {syscalls: [" + strings.Join(names, ", ") + "]}\n"
	if err := os.WriteFile(sc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := stubRunner(t)
	long := strings.Repeat("v", 65)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", sc, "-o", os.DevNull}, "tracer syscall measures 17 metrics here; one tracer measures at most 16"},
		{[]string{"gate", sc, "--baseline", filepath.Join(dir, "store"), "--save-baseline"}, "at most 16"},
		{[]string{"gate", "syscall-read", "--variant", "base", "--variant", long}, "at most 64"},
		{[]string{"matrix", "syscall-read", "--variant", "base", "--variant", long + ":vm.swappiness=10"}, "at most 64"},
	} {
		code, _, stderr := cli(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tailgate %s: exit %d, stderr %q; want 2 and one line saying %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
	if *calls > 0 {
		t.Errorf("%d runs before the refusals", *calls)
	}
}

// TestPlanOverTheCapRefused: a plan whose trials and warmups take longer
// than --max-time (6 h unless raised) is exit 2 before anything runs, in
// one line saying how long it would take and the flag that raises the
// limit. Once, 1000 trials of an hour with 10 minutes of warmup started.
func TestPlanOverTheCapRefused(t *testing.T) {
	dir := t.TempDir()
	calls := stubRunner(t)
	var f fakeExec
	root := fakeSysctls(t)
	invoke := func(args []string) (int, string) {
		var o, e bytes.Buffer
		var err error
		switch {
		case args[0] == "matrix":
			err = runMatrix(context.Background(), args[1:], &o, &e, f.env(root))
		case args[0] == "gate" && slices.Contains(args, "--variant"):
			err = runGate(context.Background(), args[1:], &o, &e, f.env(root))
		default:
			return run(context.Background(), args, &o, &e), e.String()
		}
		return exitCode(err), fmt.Sprintln(err) + e.String()
	}
	long := []string{"--trials", "1000", "--duration", "1h", "--warmup", "10m"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"run", "syscall-read"}, long...), "takes at least 1000h10m (the trials and warmups of 1 scenario on 1 target), over the most a run may take, 6h: give --max-time 1000h11m"},
		{append([]string{"run", "syscall-read", "--max-time", "100h"}, long...), "over the most a run may take, 100h: give --max-time"},
		{append([]string{"gate", "syscall-read", "--baseline", filepath.Join(dir, "store"), "--save-baseline"}, long...), "takes at least 1000h10m"},
		{append([]string{"calibrate", "syscall-read", "--runs", "3"}, long...), "takes at least 3000h30m (3 runs of"},
		{[]string{"matrix", "syscall-read", "--variant", "a", "--variant", "b", "--trials", "200", "--duration", "1m", "--warmup", "0s"}, "takes at least 6h40m (200 rounds"},
		{[]string{"gate", "syscall-read", "--variant", "a", "--variant", "b", "--budget", "7h"}, "takes at least 7h (the rounds' --budget)"},
	} {
		code, msg := invoke(tc.args)
		if code != exitUsage || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("tailgate %s: exit %d, %q; want 2 and one line saying %q", strings.Join(tc.args, " "), code, msg, tc.want)
		}
	}
	if *calls > 0 || len(f.calls) > 0 {
		t.Errorf("runs before the refusals: %d, %v", *calls, f.calls)
	}
	// Raised, the same plan passes the check: it starts, and stops at
	// once, its context cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o bytes.Buffer
	err := runMatrix(ctx, []string{"syscall-read", "--variant", "a", "--variant", "b", "--trials", "200", "--duration", "1m", "--warmup", "0s", "--max-time", "7h"}, &o, &o, f.env(root))
	if err == nil || strings.Contains(err.Error(), "--max-time") || !strings.Contains(err.Error(), "interrupt") {
		t.Errorf("with --max-time 7h: %v; want the rounds started, and interrupted", err)
	}
}
