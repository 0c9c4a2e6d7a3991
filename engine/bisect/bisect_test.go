package bisect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/judgetest"
)

func TestMarkOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     *Measure
		build error
		want  Mark
	}{
		{"regression", &Measure{Verdict: stats.Regression}, nil, Bad},
		{"no change", &Measure{Verdict: stats.NoChange}, nil, Good},
		{"improvement", &Measure{Verdict: stats.Improvement}, nil, Good},
		{"inconclusive", &Measure{Verdict: stats.Inconclusive}, nil, Skip},
		{"build failed", nil, &BuildError{Err: errors.New("exit status 1")}, Skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MarkOf(tc.m, tc.build); got != tc.want {
				t.Errorf("MarkOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	v := func(kinds ...stats.Kind) []render.JSONVerdict {
		var out []render.JSONVerdict
		for _, k := range kinds {
			out = append(out, render.JSONVerdict{Gated: true, Verdict: k})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		gated []render.JSONVerdict
		want  stats.Kind
	}{
		{"one regression among others", v(stats.NoChange, stats.Regression, stats.Inconclusive), stats.Regression},
		{"one open", v(stats.NoChange, stats.Inconclusive), stats.Inconclusive},
		{"all decided", v(stats.NoChange, stats.Improvement), stats.NoChange},
		{"nothing gated", nil, stats.Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verdict(tc.gated); got != tc.want {
				t.Errorf("Verdict = %s, want %s", got, tc.want)
			}
		})
	}
}

// fakeGate gates without tracers: a build's verdict is the file verdict
// its commit holds ("regression", "no change", "inconclusive"; "error",
// "refuse" and "interrupt" fail the gate as the machinery, the input or
// an interrupt would). It checks that the good build and the step's are
// builds of the commits they should be.
type fakeGate struct {
	t      *testing.T
	good   string
	cancel context.CancelFunc
	gated  []string
}

func (f *fakeGate) Gate(ctx context.Context, r Request) (*Measure, error) {
	if got := readBuilt(f.t, r.GoodDir); got != f.good {
		f.t.Errorf("gate of %s: the good build is of %s, want %s", Short(r.Commit), Short(got), Short(f.good))
	}
	if got := readBuilt(f.t, r.Dir); got != r.Commit {
		f.t.Errorf("gate of %s: the step's build is of %s", Short(r.Commit), Short(got))
	}
	f.gated = append(f.gated, r.Commit)
	b, err := os.ReadFile(filepath.Join(r.Dir, "verdict"))
	if err != nil {
		return nil, err
	}
	switch k := strings.TrimSpace(string(b)); k {
	case "error":
		return nil, errors.New("attach uprobe: no such device")
	case "refuse":
		return nil, badInputf("scenario: unknown key")
	case "interrupt":
		f.cancel()
		return nil, ctx.Err()
	default:
		r := 1.0
		if k == string(stats.Regression) {
			r = 3
		}
		return &Measure{Verdict: stats.Kind(k), Headline: k, Gated: []render.JSONVerdict{
			{Metric: "ufunc.work:tg_op", Percentile: "p99", Gated: true, Verdict: stats.Kind(k), Ratio: &r}}}, nil
	}
}

// readBuilt is the commit the build in dir was made of.
func readBuilt(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "built"))
	if err != nil {
		t.Errorf("no build in %s: %v", dir, err)
	}
	return strings.TrimSpace(string(b))
}

// The build writes the commit it built to built, and fails in a commit
// that has a file broken.
const fakeBuild = `test ! -e broken && echo "$TAILGATE_COMMIT" > built`

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(gitEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return strings.TrimSpace(string(b))
}

// history makes a repository of one commit per entry of verdicts, each
// holding its verdict (a trailing "!" marks a commit that does not
// build), and returns it with its commits, oldest first.
func history(t *testing.T, verdicts ...string) (string, []string) {
	dir := t.TempDir()
	gitT(t, dir, "init", "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte("name: work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a build leaves is ignored, as in a project's own .gitignore.
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("built\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i, v := range verdicts {
		v, broken := strings.CutSuffix(v, "!")
		if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "broken"))
		if broken {
			if err := os.WriteFile(filepath.Join(dir, "broken"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitT(t, dir, "add", "--all")
		gitT(t, dir, "commit", "--quiet", "--allow-empty", "-m", fmt.Sprintf("c%d: %s", i, v))
		commits = append(commits, gitT(t, dir, "rev-parse", "HEAD"))
	}
	return dir, commits
}

// checkUntouched checks that the bisect left the checkout as it was
// (branch main at head, clean, not bisecting, no worktree of its own
// left) and no temporary directory behind.
func checkUntouched(t *testing.T, repo, head, tmp string) {
	t.Helper()
	if got := gitT(t, repo, "rev-parse", "HEAD"); got != head {
		t.Errorf("checkout's HEAD is %s, want %s", got, head)
	}
	if got := gitT(t, repo, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("checkout's HEAD is %s, want refs/heads/main", got)
	}
	if got := gitT(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("checkout changed:\n%s", got)
	}
	if got := gitT(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if got := gitT(t, repo, "for-each-ref", "refs/bisect"); got != "" {
		t.Errorf("bisect refs left:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "BISECT_LOG")); err == nil {
		t.Error("the checkout is bisecting")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("left in the temporary directory: %v", ents)
	}
}

func TestRun(t *testing.T) {
	const (
		good = "no change"
		reg  = "regression"
		open = "inconclusive"
	)
	for _, tc := range []struct {
		name       string
		verdicts   []string
		first      int   // the first bad commit; -1 none
		candidates []int // when skips hide it
		found      bool
		marks      map[int]Mark // the step of each commit measured after the check
		err        string       // "input", "infra" or "interrupt"
	}{
		{name: "in the middle", verdicts: []string{good, good, reg, reg, reg}, first: 2, found: true,
			marks: map[int]Mark{2: Bad, 1: Good}},
		{name: "the bad commit itself", verdicts: []string{good, good, good, good, reg}, first: 4, found: true,
			marks: map[int]Mark{2: Good, 3: Good}},
		{name: "right after good", verdicts: []string{good, reg, reg, reg, reg}, first: 1, found: true,
			marks: map[int]Mark{2: Bad, 1: Bad}},
		{name: "a build fails", verdicts: []string{good, good, reg + "!", reg, reg}, first: -1, candidates: []int{2, 3}, found: true,
			marks: map[int]Mark{2: Skip, 1: Good, 3: Bad}},
		{name: "a gate is inconclusive", verdicts: []string{good, open, reg, reg, reg}, first: -1, candidates: []int{1, 2}, found: true,
			marks: map[int]Mark{2: Bad, 1: Skip}},
		{name: "bad does not regress", verdicts: []string{good, good, good, good, good}, first: -1},
		{name: "bad is inconclusive", verdicts: []string{good, good, good, good, open}, first: -1},
		{name: "the gate fails", verdicts: []string{good, good, "error", reg, reg}, err: "infra"},
		{name: "the gate refuses its input", verdicts: []string{good, good, "refuse", reg, reg}, err: "input"},
		{name: "interrupted", verdicts: []string{good, good, "interrupt", reg, reg}, err: "interrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, commits := history(t, tc.verdicts...)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			gate := &fakeGate{t: t, good: commits[0], cancel: cancel}
			var log strings.Builder
			keep := filepath.Join(t.TempDir(), "steps")
			out, err := Run(ctx, Options{Repo: repo, Good: commits[0], Bad: "main", Build: fakeBuild,
				Scenario: filepath.Join(repo, "bench.yaml"), Out: keep, Gate: gate, Log: &log})
			checkUntouched(t, repo, commits[len(commits)-1], tmp)
			switch tc.err {
			case "":
				if err != nil {
					t.Fatalf("Run: %v\n%s", err, log.String())
				}
			case "input":
				if !errors.Is(err, ErrBadInput) {
					t.Fatalf("Run: %v, want bad input", err)
				}
				return
			case "infra":
				if err == nil || errors.Is(err, ErrBadInput) || errors.Is(err, ErrInterrupted) {
					t.Fatalf("Run: %v, want the machinery's error", err)
				}
				return
			case "interrupt":
				if !errors.Is(err, ErrInterrupted) {
					t.Fatalf("Run: %v, want ErrInterrupted", err)
				}
				return
			}
			if out.Found() != tc.found {
				t.Errorf("Found = %v, want %v", out.Found(), tc.found)
			}
			want := ""
			if tc.first >= 0 {
				want = commits[tc.first]
			}
			if out.First != want {
				t.Errorf("first bad commit %s, want %s\n%s", Short(out.First), Short(want), log.String())
			}
			var cands []string
			for _, i := range tc.candidates {
				cands = append(cands, commits[i])
			}
			got := slices.Clone(out.Candidates)
			slices.Sort(got)
			slices.Sort(cands)
			// git names the bad commit among the candidates when it
			// could be the first.
			got = slices.DeleteFunc(got, func(c string) bool { return c == commits[len(commits)-1] && !slices.Contains(cands, c) })
			if diff := cmp.Diff(cands, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			marks := map[int]Mark{}
			for _, s := range out.Steps {
				marks[slices.Index(commits, s.Commit)] = s.Mark
				if (s.Build != nil) != strings.HasSuffix(tc.verdicts[slices.Index(commits, s.Commit)], "!") {
					t.Errorf("step %d: build error %v", s.N, s.Build)
				}
			}
			if tc.marks == nil {
				tc.marks = map[int]Mark{}
			}
			if diff := cmp.Diff(tc.marks, marks); diff != "" {
				t.Errorf("marks (-want +got):\n%s\n%s", diff, log.String())
			}
			var text strings.Builder
			if err := out.WriteText(&text, true); err != nil {
				t.Fatal(err)
			}
			if want != "" && !strings.Contains(text.String(), "first bad commit: "+want) {
				t.Errorf("the summary does not name %s:\n%s", want, text.String())
			}
			if !tc.found && !strings.Contains(text.String(), "no regression to bisect") {
				t.Errorf("the summary does not say there is nothing to bisect:\n%s", text.String())
			}
			// -o keeps each step's files and git's log of the bisect.
			for _, s := range append([]Step{out.Check}, out.Steps...) {
				if _, err := os.Stat(filepath.Join(s.Dir, "build.log")); err != nil || !strings.HasPrefix(s.Dir, keep) {
					t.Errorf("step %d's files not kept in %s: %v", s.N, keep, err)
				}
			}
			if _, err := os.Stat(filepath.Join(keep, "bisect.log")); (err == nil) != tc.found {
				t.Errorf("bisect.log: %v", err)
			}
		})
	}
}

// TestRunBadInput checks that each input the bisect cannot start from
// is one ErrBadInput, before anything is made.
func TestRunBadInput(t *testing.T) {
	repo, commits := history(t, "no change", "no change", "regression")
	notRepo := t.TempDir()
	shallow := filepath.Join(t.TempDir(), "shallow")
	gitT(t, repo, "clone", "--quiet", "--depth", "1", "file://"+repo, shallow)
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	ok := Options{Repo: repo, Good: commits[0], Bad: commits[2], Build: fakeBuild, Scenario: filepath.Join(repo, "bench.yaml")}
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"not a repository", func(o *Options) { o.Repo = notRepo }, "not a git checkout"},
		{"unknown commit", func(o *Options) { o.Good = "nosuch" }, "--good nosuch: no such commit"},
		{"not in a shallow clone", func(o *Options) { o.Repo, o.Bad = shallow, "HEAD" }, "it is a shallow clone: fetch the history"},
		{"good after bad", func(o *Options) { o.Good, o.Bad = o.Bad, o.Good }, "is not an ancestor of --bad"},
		{"one commit", func(o *Options) { o.Bad = o.Good }, "are one commit"},
		{"no build", func(o *Options) { o.Build = "" }, "--build: give the shell command"},
		{"no scenario file", func(o *Options) { o.Scenario = "syscall-read" }, "not a file"},
		{"output not empty", func(o *Options) { o.Out = full }, "not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			o := ok
			o.Gate = &fakeGate{t: t, good: commits[0]}
			tc.edit(&o)
			_, err := Run(context.Background(), o)
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want bad input saying %q", err, tc.want)
			}
			checkUntouched(t, repo, commits[2], tmp)
		})
	}
}

// TestScenarioDir checks where a scenario's relative paths resolve in a
// worktree: its own directory's copy, or the top for a file outside.
func TestScenarioDir(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, "bench", "net"), 0o755)
	for _, tc := range []struct{ scenario, want string }{
		{filepath.Join(top, "latency.yaml"), "."},
		{filepath.Join(top, "bench", "net", "latency.yaml"), filepath.Join("bench", "net")},
		{filepath.Join(t.TempDir(), "latency.yaml"), "."},
	} {
		got, err := scenarioDir(top, tc.scenario)
		if err != nil || got != tc.want {
			t.Errorf("scenarioDir(%s) = %q, %v; want %q", tc.scenario, got, err, tc.want)
		}
	}
}

func TestEnded(t *testing.T) {
	const first = "fadcf8d6cb07128208a905bb7f2eb5a4e3e1f506 is the first bad commit\ncommit fadcf8d6cb07128208a905bb7f2eb5a4e3e1f506\n"
	const skipped = "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of:\n" +
		"fadcf8d6cb07128208a905bb7f2eb5a4e3e1f506\n125b892a57faa69586ef339c2fbc9d6fc0c7a50b\nWe cannot bisect more!\n"
	const going = "Bisecting: 1 revision left to test after this (roughly 1 step)\n[daec18dbd8fa60b236ca91217d959d8403152ad6] c1\n"
	if f, c := ended(first); f != "fadcf8d6cb07128208a905bb7f2eb5a4e3e1f506" || c != nil {
		t.Errorf("first: %q %v", f, c)
	}
	if f, c := ended(skipped); f != "" || len(c) != 2 {
		t.Errorf("only skipped: %q %v", f, c)
	}
	if f, c := ended(going); f != "" || c != nil {
		t.Errorf("going on: %q %v", f, c)
	}
}

// TestParseReport reads a real same-job gate's JSON report (two builds of
// one source, 49 rounds, p99 still undecided at ±10%) and the same with
// its gated verdict turned into a regression, with the figures of one
// (judgetest.Possible holds both to the judge's rule).
func TestParseReport(t *testing.T) {
	b, err := os.ReadFile("testdata/aa-report.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := strings.NewReplacer(`"verdict": "inconclusive"`, `"verdict": "regression"`,
		`"ratio": 1.0066264580453497,`, `"ratio": 1.2466264580453497,`,
		`"ci_lo": 0.9458598080418748,`, `"ci_lo": 1.1458598080418748,`,
		`"ci_hi": 1.096372896172022,`, `"ci_hi": 1.356372896172022,`).Replace(string(b))
	for _, tc := range []struct {
		name     string
		doc      string
		want     stats.Kind
		describe string
	}{
		{"inconclusive", string(b), stats.Inconclusive, "inconclusive, ufunc.work:tg_op p99 ×1.01 [×0.95, ×1.10]"},
		{"regression", reg, stats.Regression, "regression, ufunc.work:tg_op p99 ×1.25 [×1.15, ×1.36]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseReport([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if m.Verdict != tc.want || len(m.Gated) != 1 || MarkOf(m, nil) != map[stats.Kind]Mark{stats.Inconclusive: Skip, stats.Regression: Bad}[tc.want] {
				t.Fatalf("verdict %s, %d gated, want %s and 1", m.Verdict, len(m.Gated), tc.want)
			}
			if got := Describe(m); got != tc.describe {
				t.Errorf("Describe = %q, want %q", got, tc.describe)
			}
			g := m.Gated[0]
			v := stats.Verdict{Metric: g.Metric, Quantile: g.Percentile, Kind: g.Verdict, Gated: g.Gated, Ratio: *g.Ratio, Lo: *g.Lo, Hi: *g.Hi, Threshold: *g.Threshold}
			if err := judgetest.Possible(v); err != nil {
				t.Errorf("the fixture's verdict is one the judge could not give: %v", err)
			}
		})
	}
	if _, err := ParseReport([]byte(`{"schema": 2}`)); err == nil {
		t.Error("a report of a newer schema is read")
	}
}

// kernelGate checks a kernel's bisect's gates: each side boots the image
// its own commit's build left, with the command line its commit holds,
// and is named good or after the commit. A command line with audit=1
// regresses.
type kernelGate struct {
	t     *testing.T
	good  string
	gated []string
}

func (k *kernelGate) Gate(ctx context.Context, r Request) (*Measure, error) {
	for i, want := range []string{"good", Short(r.Commit)} {
		name, rest, _ := strings.Cut(r.Kernels[i], "=")
		image, cmdline, _ := strings.Cut(rest, " ")
		b, err := os.ReadFile(image)
		built := map[int]string{0: k.good, 1: r.Commit}[i]
		if name != want || err != nil || strings.TrimSpace(string(b)) != built {
			k.t.Errorf("gate of %s, side %d: --kernel %q: want %s= the image built of %s (%v)", Short(r.Commit), i, r.Kernels[i], want, Short(built), err)
		}
		if i == 1 {
			k.gated = append(k.gated, r.Commit+" "+cmdline)
		}
	}
	v := stats.NoChange
	if strings.Contains(r.Kernels[1], "audit=1") {
		v = stats.Regression
	}
	return &Measure{Verdict: v, Gated: []render.JSONVerdict{{Metric: "syscall.write", Percentile: "p99", Gated: true, Verdict: v}}}, nil
}

// A kernel's bisect: the build leaves an image in the worktree, each
// commit's command line is read from its own file, and the first commit
// whose boot parameters regress is found. The scenario is a built-in's
// name, not a file.
func TestRunKernel(t *testing.T) {
	repo := t.TempDir()
	gitT(t, repo, "init", "--quiet", "--initial-branch=main")
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("bzImage\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "boot"), 0o755)
	var commits []string
	for i, line := range []string{"quiet", "quiet  loglevel=3\n", "quiet audit=1", "quiet audit=1 nokaslr", "audit=1"} {
		os.WriteFile(filepath.Join(repo, "boot", "cmdline"), []byte(line), 0o644)
		gitT(t, repo, "add", "--all")
		gitT(t, repo, "commit", "--quiet", "-m", fmt.Sprintf("c%d", i))
		commits = append(commits, gitT(t, repo, "rev-parse", "HEAD"))
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gate := &kernelGate{t: t, good: commits[0]}
	var log strings.Builder
	o := Options{Repo: repo, Good: commits[0], Bad: "main", Build: `echo "$TAILGATE_COMMIT" > bzImage`,
		Scenario: "syscall-write", Kernel: "bzImage", CmdlineFile: "boot/cmdline", Gate: gate, Log: &log}
	out, err := Run(context.Background(), o)
	checkUntouched(t, repo, commits[4], tmp)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if out.First != commits[2] {
		t.Errorf("first bad commit %s, want %s (c2, audit=1)\n%s", Short(out.First), Short(commits[2]), log.String())
	}
	if len(gate.gated) == 0 || gate.gated[0] != commits[4]+" audit=1" {
		t.Errorf("gated %q: want the bad commit first, with its command line", gate.gated)
	}
	if !slices.Contains(gate.gated, commits[1]+" quiet loglevel=3") {
		t.Errorf("gated %q: c1's command line not read as one line", gate.gated)
	}

	// An image the build did not leave is the input's.
	o.Build, o.Gate = "true", &kernelGate{t: t, good: commits[0]}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "--build must leave the kernel image there") {
		t.Errorf("no image: %v, want bad input", err)
	}
	o.Build, o.CmdlineFile = `echo "$TAILGATE_COMMIT" > bzImage`, "boot/none"
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "--cmdline-file boot/none: not in") {
		t.Errorf("no command line file: %v, want bad input", err)
	}
	checkUntouched(t, repo, commits[4], tmp)
}

// A kernel's bisect gates two VMs, each named, where a program's gates
// two host variants of its builds.
func TestGateArgs(t *testing.T) {
	g := &ExecGate{Scenario: "syscall-read", Args: []string{"--clock", "virtual"}}
	r := Request{Commit: "4d7ad6fe6c15aa", GoodDir: "/g", Dir: "/c", Out: "/o"}
	want := "gate syscall-read --variant good:dir=/g --variant 4d7ad6fe6c15:dir=/c -o /o/result.json --format json=/o/report.json --format text=/o/report.txt --clock virtual"
	if got := strings.Join(g.GateArgs(r), " "); got != want {
		t.Errorf("a program's gate:\n got %s\nwant %s", got, want)
	}
	r.Kernels = [2]string{"good=/g/bzImage", "4d7ad6fe6c15=/c/bzImage audit=1"}
	got := g.GateArgs(r)
	if want := []string{"gate", "syscall-read", "--kernel", "good=/g/bzImage", "--kernel", "4d7ad6fe6c15=/c/bzImage audit=1", "-o"}; !slices.Equal(got[:7], want) || slices.Contains(got, "--variant") {
		t.Errorf("a kernel's gate: %q", got)
	}
}

// TestExecGateScratchLog checks a gate whose step files go when the
// bisect ends (no -o) does not pass on the lines naming them, and one
// that keeps them does.
func TestExecGateScratchLog(t *testing.T) {
	report, err := filepath.Abs("testdata/aa-report.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, scratch := range []bool{true, false} {
		t.Run(fmt.Sprintf("scratch %v", scratch), func(t *testing.T) {
			out := t.TempDir()
			exe := filepath.Join(t.TempDir(), "gate")
			script := "#!/bin/sh\necho 'round 1: trial done' >&2\n" +
				"echo 'result of good written to " + out + "/result-good.json' >&2\n" +
				"printf 'no newline' >&2\n" +
				"cp '" + report + "' '" + out + "/report.json'\n"
			if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			g := &ExecGate{Exe: exe, Scenario: "s", Log: &log}
			if _, err := g.Gate(context.Background(), Request{Commit: strings.Repeat("a", 40), Out: out, Scratch: scratch}); err != nil {
				t.Fatal(err)
			}
			want := "round 1: trial done\nno newline"
			if !scratch {
				want = "round 1: trial done\nresult of good written to " + out + "/result-good.json\nno newline"
			}
			if log.String() != want {
				t.Errorf("log %q, want %q", log.String(), want)
			}
			if b, _ := os.ReadFile(filepath.Join(out, "gate.log")); !strings.Contains(string(b), "written to") {
				t.Errorf("gate.log %q lost the line", b)
			}
		})
	}
}
