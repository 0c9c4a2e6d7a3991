package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func historyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"history"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// historyOfRealTrials writes twelve Results drawn from real recorded
// syscall-read trials (five a commit), the last six made 20% slower, and
// adds them to a directory store as twelve commits. vm makes them
// records of VM targets whose kernel differs from commit 7 on.
func historyOfRealTrials(t *testing.T, vm bool) (store string, commits []string) {
	return historyOfTrials(t, vm, 1.2)
}

func historyOfTrials(t *testing.T, vm bool, shift float64, edits ...func(commit int, r *result.Result)) (store string, commits []string) {
	t.Helper()
	pool, err := result.Load(filepath.Join("..", "..", "report", "testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store = filepath.Join(dir, "store")
	r := rand.New(rand.NewPCG(7, 7))
	src := pool.Scenarios[0].Metrics["syscall.read"].Trials
	for c := 1; c <= 12; c++ {
		res := *pool
		sc := pool.Scenarios[0]
		m := &result.Metric{Unit: "ns"}
		drawn := map[int]bool{}
		for range 5 {
			i := r.IntN(len(src))
			for drawn[i] { // a trial twice would be a copy, which Results refuse
				i = r.IntN(len(src))
			}
			drawn[i] = true
			tr := src[i]
			if c >= 7 && shift != 1 {
				h := hist.New()
				for i, n := range tr.Histogram.Counts() {
					if n != 0 {
						h.RecordN(uint64(hist.Mid(i)*shift), n)
					}
				}
				tr.Histogram, tr.Summary = h, result.Summarize(h)
			}
			m.Trials = append(m.Trials, tr)
		}
		sc.Metrics = map[string]*result.Metric{"syscall.read": m}
		res.Scenarios = []result.Scenario{sc}
		if vm {
			shift := 0
			res.Target = result.Target{Name: "deb", Kind: "vm", Kernel: "debian:6.1.0-old-cloud-amd64", Clock: result.ClockVirtual, IcountShift: &shift}
			if c >= 7 {
				res.Target.Kernel = "debian:6.1.0-new-cloud-amd64"
			}
		}
		for _, edit := range edits {
			edit(c, &res)
		}
		path := filepath.Join(dir, fmt.Sprintf("r%d.json", c))
		if err := result.Write(path, &res); err != nil {
			t.Fatal(err)
		}
		commit := fmt.Sprintf("%06x%034x", 0xabc000+c, 0)
		commits = append(commits, commit)
		if code, _, stderr := historyRun(t, "add", store, path, "--commit", commit, "--time", fmt.Sprint(1700000000+3600*c), "--ref", "main"); code != 0 {
			t.Fatalf("history add: exit %d: %s", code, stderr)
		}
	}
	return store, commits
}

func TestHistoryChangesAndPage(t *testing.T) {
	store, commits := historyOfRealTrials(t, false)
	if code, out, stderr := historyRun(t, "check", store); code != 0 || !strings.Contains(out, "12 records of 12 commits") {
		t.Fatalf("check: exit %d: %s %s", code, out, stderr)
	}
	code, out, stderr := historyRun(t, "changes", store, "--format", "json")
	if code != 0 {
		t.Fatalf("changes: exit %d: %s", code, stderr)
	}
	var rep struct {
		Changes []struct {
			Commit string
			Key    struct{ Metric, Percentile string }
			Index  int
			Ratio  struct{ Center, Lo, Hi float64 }
			P      float64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].Commit != commits[6] || rep.Changes[0].Key.Metric != "syscall.read" || rep.Changes[0].Key.Percentile != "p99" {
		t.Fatalf("changes %+v, want one: syscall.read p99 at commit 7", rep.Changes)
	}
	if c := rep.Changes[0]; c.Ratio.Lo > 1.2 || c.Ratio.Hi < 1.2 {
		t.Errorf("ratio %+v does not hold the ×1.2 made", c.Ratio)
	}
	for _, f := range []string{"text", "markdown"} {
		code, out, _ := historyRun(t, "changes", store, "--format", f)
		if code != 0 || !strings.Contains(out, commits[6][:12]) || !strings.Contains(out, "regression") {
			t.Errorf("changes --format %s: exit %d:\n%s", f, code, out)
		}
	}
	site := filepath.Join(t.TempDir(), "site")
	if code, _, stderr := historyRun(t, "page", store, "-o", site, "--commit-url", "https://example.com/commit/%s"); code != 0 {
		t.Fatalf("page: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", `class="change"`, "https://example.com/commit/" + commits[6], "syscall.read p99 (gated)"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := bytes.Count(page, []byte(`class="point`)); n != 12 {
		t.Errorf("page plots %d points, want 12", n)
	}
	// Twelve commits without the step: no change point.
	flat, _ := historyOfTrials(t, false, 1)
	if code, out, _ := historyRun(t, "changes", flat); code != 0 || !strings.Contains(out, "no change point") {
		t.Errorf("changes of a step-free history: exit %d:\n%s", code, out)
	}
}

// TestHistoryChangesCounts checks history's lines count what they name,
// in correct English: a series too short to test is not counted as
// tested, and one commit is not "1 commits".
func TestHistoryChangesCounts(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	pool := filepath.Join("..", "..", "report", "testdata", "trials-syscall-read.json")
	code, _, stderr := historyRun(t, "add", store, pool, "--commit", strings.Repeat("a", 40))
	if code != 0 || !strings.Contains(stderr, "(1 scenario)") {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	if code, out, _ := historyRun(t, "check", store); code != 0 || !strings.Contains(out, "1 record of 1 commit, whole") {
		t.Errorf("check of one record: exit %d: %s", code, out)
	}
	code, out, _ := historyRun(t, "changes", store)
	first, _, _ := strings.Cut(out, "\n")
	if want := "1 series, not tested: it has fewer than the 6 commits a change point needs"; code != 0 || first != want {
		t.Errorf("changes of one commit: exit %d, first line %q, want %q", code, first, want)
	}
	if !strings.Contains(out, "syscall.read p99: 1 commit, a change point needs 6; not tested") || strings.Contains(out, "1 commits") {
		t.Errorf("changes of one commit:\n%s", out)
	}
	code, out, _ = historyRun(t, "changes", store, "--format", "json")
	var rep struct {
		Series []any
		Tested *int
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Tested == nil || *rep.Tested != 0 || len(rep.Series) != 1 {
		t.Errorf("changes --format json of one commit: exit %d, %v: tested %v of %d series", code, err, rep.Tested, len(rep.Series))
	}
	site := filepath.Join(t.TempDir(), "site")
	if code, _, stderr := historyRun(t, "page", store, "-o", site); code != 0 || !strings.Contains(stderr, ": 1 series, 0 change points") {
		t.Errorf("page of one commit: exit %d: %s", code, stderr)
	}

	// Twelve commits, a step at the seventh: tested, one found.
	stepped, _ := historyOfRealTrials(t, false)
	code, out, _ = historyRun(t, "changes", stepped)
	first, _, _ = strings.Cut(out, "\n")
	if want := "1 series tested, family-wise level 0.01 (Holm): 1 change point"; code != 0 || first != want {
		t.Errorf("changes of twelve commits: exit %d, first line %q, want %q", code, first, want)
	}
	if !strings.Contains(out, "(6 commits)") {
		t.Errorf("changes of twelve commits: no side of 6 commits:\n%s", out)
	}
}

func TestHistoryConfirm(t *testing.T) {
	store, commits := historyOfRealTrials(t, true)
	var got []string
	old := confirmGate
	confirmGate = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		got = args
		return nil
	}
	defer func() { confirmGate = old }()
	if code, _, stderr := historyRun(t, "confirm", store, commits[6][:10], "--", "--budget", "5m"); code != 0 {
		t.Fatalf("confirm: exit %d: %s", code, stderr)
	}
	// The records ran in virtual time: so does their confirmation.
	want := "--kernel " + commits[5][:12] + "=debian:6.1.0-old-cloud-amd64 --kernel " + commits[6][:12] + "=debian:6.1.0-new-cloud-amd64 --clock virtual --budget 5m -- syscall-read"
	if strings.Join(got, " ") != want {
		t.Errorf("gate args %q, want %q", strings.Join(got, " "), want)
	}
	// --build: the command builds each commit's kernel; base first.
	got = nil
	build := `echo "$TAILGATE_COMMIT" > "$TAILGATE_OUT/bzImage"`
	bdir := t.TempDir()
	if code, _, stderr := historyRun(t, "confirm", store, commits[6], "--build", build, "--build-dir", bdir); code != 0 {
		t.Fatalf("confirm --build: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(bdir, "base", "bzImage"))
	if strings.TrimSpace(string(b)) != commits[5] || len(got) != 8 || got[1] != commits[5][:12]+"="+filepath.Join(bdir, "base", "bzImage") || got[3] != commits[6][:12]+"="+filepath.Join(bdir, "head", "bzImage") {
		t.Errorf("--build: base built %q, gate args %q", b, got)
	}
}

func TestHistoryBadInput(t *testing.T) {
	store, commits := historyOfRealTrials(t, false)
	res := filepath.Join(t.TempDir(), "r.json")
	r, _ := result.Load(filepath.Join("..", "..", "report", "testdata", "trials-syscall-read.json"))
	result.Write(res, r)
	for _, c := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no commit", []string{"add", store, res}, "--commit SHA is required", 2},
		{"bad commit", []string{"add", store, res, "--commit", "HEAD"}, "not a whole commit id", 2},
		{"duplicate", []string{"add", store, res, "--commit", commits[0]}, "already recorded", 2},
		{"bad time", []string{"add", store, res, "--commit", commits[0], "--time", "yesterday"}, "--time", 2},
		{"no store", []string{"changes", filepath.Join(t.TempDir(), "none")}, "no such file", 2},
		{"bad percentile", []string{"changes", store, "--percentile", "p100"}, "unknown percentile", 2},
		{"prune nothing", []string{"prune", store}, "--keep N or --older-than D", 2},
		{"host confirm", []string{"confirm", store, commits[6]}, "give --build", 2},
		{"first confirm", []string{"confirm", store, commits[0]}, "no commit before it", 2},
		{"unknown sub", []string{"frobnicate"}, "unknown subcommand", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := historyRun(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, want %d; stderr %q, want one line with %q", code, c.code, stderr, c.want)
			}
		})
	}
	// A torn record: check says so, exit 2.
	var rec string
	filepath.WalkDir(filepath.Join(store, "records"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && rec == "" {
			rec = p
		}
		return nil
	})
	b, _ := os.ReadFile(rec)
	os.WriteFile(rec, b[:len(b)/3], 0o644)
	if code, out, _ := historyRun(t, "check", store); code != 2 || !strings.Contains(out, "torn") {
		t.Errorf("check of a torn record: exit %d:\n%s", code, out)
	}
}

// confirmStore is a store of two commits' records of a VM target, made
// from real trials and changed by edit as an attacker who can push to
// the store would.
func confirmStore(t *testing.T, edit func(*result.Result)) (store, head string) {
	t.Helper()
	res, err := result.Load(filepath.Join("..", "..", "report", "testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store = filepath.Join(dir, "store")
	for c := 1; c <= 2; c++ {
		shift := 0
		res.Target = result.Target{Name: "deb", Kind: "vm", Kernel: "debian:6.1.0-old-cloud-amd64", Clock: result.ClockVirtual, IcountShift: &shift}
		edit(res)
		path := filepath.Join(dir, fmt.Sprintf("r%d.json", c))
		if err := result.Write(path, res); err != nil {
			t.Fatal(err)
		}
		head = fmt.Sprintf("%06x%034x", 0xabc000+c, 0)
		if code, _, stderr := historyRun(t, "add", store, path, "--commit", head, "--time", fmt.Sprint(1700000000+3600*c)); code != 0 {
			t.Fatalf("history add: exit %d: %s", code, stderr)
		}
	}
	return store, head
}

// A record's text is data: a scenario name that is a flag or a path, a
// kernel that is a device, a clock that is none, never reach the gate;
// confirm refuses the record in one line, exit 2.
func TestHistoryConfirmRefusesForgedRecords(t *testing.T) {
	ran := false
	old := confirmGate
	confirmGate = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		ran = true
		return nil
	}
	defer func() { confirmGate = old }()
	name := func(n string) func(*result.Result) {
		return func(r *result.Result) { r.Scenarios[0].Name = n }
	}
	for _, c := range []struct {
		name string
		edit func(*result.Result)
		want string
	}{
		{"help flag", name("-h"), "no scenario name"},
		{"a file root reads", name("/etc/shadow"), "no scenario name"},
		{"a flag with a value", name("--format=markdown=/tmp/x"), "no scenario name"},
		{"upper case", name("Syscall-Read"), "no scenario name"},
		{"not built in", name("my-own"), "not built in"},
		{"a device as kernel", func(r *result.Result) { r.Target.Kernel = "/dev/zero" }, "not a regular file"},
		{"a kernel with a carriage return", func(r *result.Result) { r.Target.Cmdline = "quiet\rpanic=1" }, "control character"},
		{"a kernel of two words", func(r *result.Result) { r.Target.Kernel = "debian:6.1 --vcpus" }, "not one word"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, head := confirmStore(t, c.edit)
			for _, dry := range []bool{false, true} {
				ran = false
				args := []string{"confirm", store, head}
				if dry {
					args = append(args, "--dry-run")
				}
				code, stdout, stderr := historyRun(t, args...)
				if code != 2 || ran || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("dry-run %v: exit %d, gate ran %v, stdout %q; stderr %q, want one line with %q", dry, code, ran, stdout, stderr, c.want)
				}
			}
		})
	}
}

// --dry-run prints the command that runs: bash splits the printed line
// back into the gate's arguments, a record's command line with a quote
// and spaces in it included.
func TestHistoryConfirmDryRunQuoted(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	store, head := confirmStore(t, func(r *result.Result) { r.Target.Cmdline = "it's panic=10 $HOME" })
	var got []string
	old := confirmGate
	confirmGate = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		got = args
		return nil
	}
	defer func() { confirmGate = old }()
	code, stdout, stderr := historyRun(t, "confirm", store, head, "--dry-run", "--", "--format=markdown=/tmp/x")
	if code != 0 || got != nil {
		t.Fatalf("confirm --dry-run: exit %d, gate ran with %q: %s", code, got, stderr)
	}
	if code, _, stderr := historyRun(t, "confirm", store, head, "--", "--format=markdown=/tmp/x"); code != 0 {
		t.Fatalf("confirm: exit %d: %s", code, stderr)
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(stdout), "tailgate gate ")
	if !ok {
		t.Fatalf("--dry-run printed %q", stdout)
	}
	split, err := exec.Command("bash", "-c", `for a in `+line+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Split(strings.TrimSuffix(string(split), "\x00"), "\x00")
	if diff := cmp.Diff(got, words); diff != "" {
		t.Errorf("the printed line is not the command that runs (-ran +printed):\n%s", diff)
	}
	if i := slices.Index(got, "--"); i < 0 || !slices.Equal(got[i+1:], []string{"syscall-read"}) {
		t.Errorf("gate args %q: want the scenario after --", got)
	}
}

// TestHistorySeriesKeepClocksApart: six records of target deb in real
// time, then six in virtual time ten times slower: two series, each
// shown as such, and no change point between them. Once, one series
// held both and changes called the clock's step a regression of +901.6%.
func TestHistorySeriesKeepClocksApart(t *testing.T) {
	store, _ := historyOfTrials(t, true, 10, func(c int, r *result.Result) {
		if c < 7 {
			r.Target.Clock, r.Target.IcountShift = result.ClockReal, nil
		}
	})
	code, out, stderr := historyRun(t, "changes", store, "--format", "json")
	var rep struct {
		Series []struct {
			Key struct{ Target, Clock string }
		}
		Changes []any
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("changes: exit %d, %v: %s", code, err, stderr)
	}
	var clocks []string
	for _, s := range rep.Series {
		clocks = append(clocks, s.Key.Clock)
	}
	if len(rep.Changes) != 0 || !slices.Equal(clocks, []string{"real time", "virtual time, shift 0"}) {
		t.Errorf("changes %v over series of clocks %q; want none, over a real and a virtual series", rep.Changes, clocks)
	}
	site := filepath.Join(t.TempDir(), "site")
	if code, _, stderr := historyRun(t, "page", store, "-o", site); code != 0 {
		t.Fatalf("page: exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(filepath.Join(site, "index.html"))
	for _, want := range []string{"deb syscall-read syscall.read p99 [real time]", "deb syscall-read syscall.read p99 [virtual time, shift 0]"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Other parameters from commit 7 on: two series again, named by them.
	store, _ = historyOfTrials(t, false, 10, func(c int, r *result.Result) {
		if c >= 7 {
			r.Scenarios[0].Params = strings.Repeat("ab", 32)
			r.Scenarios[0].Definition = nil // no definition to digest otherwise
		}
	})
	code, out, _ = historyRun(t, "changes", store)
	if code != 0 || !strings.Contains(out, "no change point") || !strings.Contains(out, "[params abababababab]") {
		t.Errorf("changes of a history whose parameters changed: exit %d:\n%s", code, out)
	}
}
