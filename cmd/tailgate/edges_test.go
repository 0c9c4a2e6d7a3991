package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// edgeCase is one command line that must be refused: exit 2 with one line
// that contains each of want.
type edgeCase struct {
	name string
	args []string
	want []string
}

func (c edgeCase) check(t *testing.T) {
	t.Helper()
	code, stdout, stderr := cli(c.args...)
	if code != exitUsage {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
	for _, w := range c.want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

// TestRefusedResults: Results that would give nonsense verdicts or double
// trials are refused.
func TestRefusedResults(t *testing.T) {
	dir := t.TempDir()
	a := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "a.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	link := filepath.Join(dir, "link.json")
	os.Symlink("a.json", link)

	overflow := filepath.Join(dir, "overflow.json")
	os.WriteFile(overflow, []byte(`{"schema": 1, "target": {"name": "host", "kind": "host"}, "scenarios": [{"name": "syscall-read", "params": "params-1", "trials": 1, "metrics": {"syscall.read": {"unit": "ns", "trials": [`+
		`{"histogram": {"scheme": "loglinear-k6-e42", "count": 0, "min": 1, "max": 2, "buckets": [[1, 9223372036854775808], [2, 9223372036854775808]]}}]}}}]}`), 0o644)

	writeEmpty := func(name string, empty func(s *result.Scenario)) *result.Result {
		r := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.result()
		empty(&r.Scenarios[0])
		if err := result.Write(filepath.Join(dir, name), r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	zero := filepath.Join(dir, "zero.json")
	writeEmpty("zero.json", func(s *result.Scenario) { s.Trials = 0; s.Metrics["syscall.read"].Trials = nil })
	noMetrics := filepath.Join(dir, "no-metrics.json")
	r := writeEmpty("no-metrics.json", func(s *result.Scenario) { s.Metrics = map[string]*result.Metric{} })
	store := filepath.Join(dir, "store")
	os.Mkdir(store, 0o755)
	stored := filepath.Join(store, baseline.FileName("syscall-read", "host", r.Environment.KernelRelease))
	result.Write(stored, r)

	for _, c := range []edgeCase{
		{"merge a file twice", []string{"merge", a, a}, []string{a, "named twice"}},
		{"merge a file and a link to it", []string{"merge", a, link, "-o", filepath.Join(dir, "m.json")}, []string{a, link, "same file"}},
		{"bucket counts overflow", []string{"compare", overflow, same}, []string{overflow, "2^64"}},
		{"save zero trials", []string{"baseline", "save", zero, filepath.Join(dir, "new-store")}, []string{"not stored as a baseline", "0 trials"}},
		{"save no metrics", []string{"baseline", "save", noMetrics, filepath.Join(dir, "new-store")}, []string{"not stored as a baseline", "no metrics"}},
		{"compare with a baseline file without metrics", []string{"compare", noMetrics, same, "--strict"}, []string{noMetrics, "no metrics"}},
		{"compare with a stored baseline without metrics", []string{"compare", store, same, "--strict"}, []string{stored, "no metrics"}},
	} {
		t.Run(c.name, c.check)
	}
	if _, err := os.Stat(filepath.Join(dir, "new-store")); err == nil {
		if ents, _ := os.ReadDir(filepath.Join(dir, "new-store")); len(ents) > 0 {
			t.Errorf("a refused save stored %v", ents)
		}
	}
}

// TestBaselineSaveWaitsForLock: a baseline save into a store another
// process is saving into waits for it, says so in one line naming the
// holder, then saves.
func TestBaselineSaveWaitsForLock(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	os.Mkdir(store, 0o755)
	r := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "r.json")
	lock, err := os.OpenFile(filepath.Join(store, baseline.LockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"baseline", "save", r, store}, io.Discard, &stderr) }()
	// The save waits once it says so.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "waiting for") {
		if time.Now().After(deadline) {
			t.Fatalf("baseline save did not wait for the lock in 10s: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if m, _ := filepath.Glob(filepath.Join(store, "*.json")); len(m) > 0 {
		t.Errorf("baseline save wrote %v while another held the lock", m)
	}
	unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	if !strings.Contains(first, fmt.Sprintf("is locked by pid %d (", os.Getpid())) || !strings.Contains(first, store) {
		t.Errorf("first line %q does not name the lock's holder, pid %d, on %s", first, os.Getpid(), store)
	}
}

// lockedBuffer is a bytes.Buffer one goroutine writes while another reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// minimalScenario is a valid scenario file.
const minimalScenario = "name: x\nworkload:\n  kind: timer\n"

// TestInputLimits: scenario and targets files over the size or nesting
// limit are refused at once, in one line naming the file and the limit;
// deep-looking text that is not nesting is not.
func TestInputLimits(t *testing.T) {
	stubResult(t, fakeRun{scenario: "x", scales: steady, seed: 1}.result()) // a file let through runs nothing
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var deepBlock, deepDashes strings.Builder
	for i := range 100 {
		fmt.Fprintf(&deepBlock, "%sk%d:\n", strings.Repeat("  ", i), i)
	}
	deepDashes.WriteString("workload: " + strings.Repeat("\n", 1))
	deepDashes.WriteString("  " + strings.Repeat("- ", 100) + "x\n")
	refused := []struct {
		name, content, want string
	}{
		{"100 000 nested [", minimalScenario + "description: " + strings.Repeat("[", 100000) + "\n", "nested more than 64 deep"},
		{"nested {a:", minimalScenario + "description: " + strings.Repeat("{a: ", 1000) + "\n", "nested more than 64 deep"},
		{"closers hidden in quotes", minimalScenario + "description: " + strings.Repeat(`[ "]" `, 100) + "\n", "nested more than 64 deep"},
		{"closers hidden in comments", minimalScenario + "description:\n" + strings.Repeat("  [ # ]\n", 100), "nested more than 64 deep"},
		{"deep flow after a block scalar", minimalScenario + "description: |\n  \"\ngate: " + strings.Repeat("[", 1000) + "\n", "nested more than 64 deep"},
		{"deep indentation", deepBlock.String(), "nested more than 64 deep"},
		{"compact sequences", deepDashes.String(), "nested more than 64 deep"},
		{"over 1 MiB", minimalScenario + strings.Repeat("# padding padding padding padding padding padding\n", 25000), "the limit is 1048576 bytes"},
		{"long description", minimalScenario + "description: " + strings.Repeat("x", 5000) + "\n", "the limit is 4096"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(c.name, " ", "-")+".yaml", c.content)
			start := time.Now()
			edgeCase{args: []string{"run", path}, want: []string{path + ":", c.want}}.check(t)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refused after %v, want at once", d)
			}
		})
	}
	t.Run("targets file", func(t *testing.T) {
		path := write("targets.yaml", "targets:\n  - name: a\n    kernel: "+strings.Repeat("[", 100000)+"\n")
		edgeCase{args: []string{"run", "syscall-read", "--targets", path, "--target", "a"}, want: []string{path + ":", "nested more than 64 deep"}}.check(t)
		big := write("big-targets.yaml", strings.Repeat("# padding\n", 120000))
		edgeCase{args: []string{"run", "syscall-read", "--targets", big, "--target", "a"}, want: []string{big + ":", "1 MiB"}}.check(t)
	})

	accepted := []struct{ name, content string }{
		{"byte order mark", "\xef\xbb\xbf" + minimalScenario},
		{"brackets in a double-quoted string", minimalScenario + "description: \"" + strings.Repeat("[{", 100) + "\"\n"},
		{"brackets in a single-quoted string", minimalScenario + "description: 'it''s " + strings.Repeat("[", 100) + "'\n"},
		{"brackets in a plain string", minimalScenario + "description: a" + strings.Repeat("[", 100) + "\n"},
		{"brackets in a block scalar", minimalScenario + "description: |\n" + strings.Repeat("  [[[[ \" ' {{{{\n", 40)},
		{"brackets in comments", minimalScenario + strings.Repeat("# [[[[[[[[[[[[[[[[[[[[\n", 10) + "description: x # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"},
		{"flow lists", minimalScenario + "tracers:\n  syscall: {syscalls: [read, write]}\n"},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Parse("x.yaml", []byte(c.content))
			if err != nil || s.Name != "x" {
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// TestRefusedFlags: flag values a scenario file would refuse, thresholds
// for metrics that are not there, a scenario named twice and baseline
// directories that cannot be one are exit 2, in one line, before anything
// runs.
func TestRefusedFlags(t *testing.T) {
	calls := stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.result())
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	copyOf := filepath.Join(dir, "syscall-read.yaml")
	os.WriteFile(copyOf, []byte("name: syscall-read\nworkload:\n  kind: timer\n"), 0o644)
	for _, c := range []edgeCase{
		{"trials 0", []string{"run", "syscall-read", "--trials", "0"}, []string{"-trials", "1 to 1000"}},
		{"trials 1001", []string{"run", "syscall-read", "--trials", "1001"}, []string{"-trials", "1 to 1000"}},
		{"duration 0", []string{"run", "syscall-read", "--duration", "0"}, []string{"-duration", "10ms to 1h"}},
		{"duration 1ns", []string{"run", "syscall-read", "--duration", "1ns"}, []string{"-duration", "10ms to 1h"}},
		{"duration 2h", []string{"run", "syscall-read", "--duration", "2h"}, []string{"-duration", "10ms to 1h"}},
		{"warmup 11m", []string{"run", "syscall-read", "--warmup", "11m"}, []string{"-warmup", "0 to 10m"}},
		{"a scenario twice", []string{"run", "syscall-read", "syscall-read"}, []string{"syscall-read is named twice"}},
		{"a scenario twice by two names", []string{"run", "syscall-read", copyOf}, []string{copyOf, "both scenario syscall-read"}},
		{"threshold for a missing metric", []string{"compare", base, same, "--threshold", "syscall.raed:p99=1%"}, []string{"syscall.raed", "syscall.read"}},
		{"threshold Inf%", []string{"compare", base, same, "--threshold", "p99=Inf%"}, []string{"p99=Inf%", "finite"}},
		{"threshold NaN", []string{"compare", base, same, "--threshold", "p99=NaN"}, []string{"p99=NaN", "finite"}},
		{"baseline save into a file", []string{"baseline", "save", base, same}, []string{same, "not a baseline directory", "it is a file"}},
		{"baseline save under a file", []string{"baseline", "save", base, filepath.Join(same, "store")}, []string{same, "not a baseline directory"}},
		{"baseline save into a symlink loop", []string{"baseline", "save", base, loop}, []string{loop, "not a baseline directory", "too many levels"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			*calls = 0
			c.check(t)
			if *calls != 0 {
				t.Errorf("ran %d times", *calls)
			}
		})
	}
	// CheckThresholds is what run-based commands call.
	ts := []stats.Threshold{{Metric: "sched.runq", Percentile: "p99"}, {Percentile: "p50"}}
	if err := engine.CheckThresholds(ts, []string{"sched.runq"}); err != nil {
		t.Errorf("a threshold for a measured metric: %v", err)
	}
	// The limits themselves are fine.
	for _, args := range [][]string{
		{"run", "syscall-read", "--trials", "1000", "--duration", "10ms", "--warmup", "0s"},
		{"run", "syscall-read", "--trials", "1", "--duration", "1h", "--warmup", "10m"},
	} {
		if code, _, stderr := cli(args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestBaselineSaveRefusesLockSymlink: a .tailgate.lock symlink in the
// store is exit 2, in one line naming it, and root's file it points at
// stays whole.
func TestBaselineSaveRefusesLockSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "shadow")
	os.WriteFile(victim, []byte("secret"), 0o600)
	store := filepath.Join(dir, "store")
	os.Mkdir(store, 0o755)
	lock := filepath.Join(store, baseline.LockName)
	os.Symlink(victim, lock)
	r := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "r.json")
	code, _, stderr := cli("baseline", "save", r, store)
	if code != exitUsage || !strings.Contains(stderr, lock) || !strings.Contains(stderr, "symlink") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, want %d and one line naming %s:\n%s", code, exitUsage, lock, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "secret" {
		t.Errorf("the lock link's target now holds %.100q", b)
	}
}
