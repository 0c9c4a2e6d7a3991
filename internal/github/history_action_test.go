package github_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// buildTailgate builds cmd/tailgate from this checkout, once per test.
func buildTailgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tailgate")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/tailgate")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tailgate: %v\n%s", err, out)
	}
	return bin
}

// bareRepo makes an empty bare repository: the server side of a git
// history store.
func bareRepo(t *testing.T, path string) string {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", "--bare", path).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return path
}

// historyEntries are the store's index, read as tailgate reads it.
func historyEntries(t *testing.T, spec string) []history.Entry {
	t.Helper()
	s, err := history.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	return v.Index.Entries
}

// TestActionHistory runs the action with history: true as the two jobs
// of a workflow would, with the real tailgate on Results made here (no
// measuring) and a real git store: pushes to main add their Result,
// also when another push wins the race, and a pull request's report and
// comment show the head against main's last commits.
func TestActionHistory(t *testing.T) {
	testenv.Need(t, testenv.Feature{Name: "/bin/bash", Use: func() error { _, err := os.Stat("/bin/bash"); return err }, Required: true})
	testenv.Need(t, testenv.Tool("git", ""))
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	bin := buildTailgate(t)
	dir := t.TempDir()
	spec := "git:" + bareRepo(t, filepath.Join(dir, "store.git")) + "#tailgate-history"
	base := syntheticResult(t, filepath.Join(dir, "base.json"), 1, 1)
	srv := githubtest.New(t, "octo/kernel", "ghs_test")

	// push runs the action as the job on a push of sha to ref would,
	// its candidate a Result at scale.
	push := func(t *testing.T, sha, ref string, scale float64, seed uint64, extraEnv ...string) *actionRun {
		t.Helper()
		gh, env := actionEnv(t, srv, 9)
		gh["event_name"] = "push"
		event := filepath.Join(t.TempDir(), "push.json")
		os.WriteFile(event, []byte(`{
  "ref": "`+ref+`",
  "after": "`+sha+`",
  "repository": {
    "full_name": "octo/kernel",
    "default_branch": "main"
  }
}`), 0o644)
		env = append(env, "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH="+event, "GITHUB_REF="+ref, "GITHUB_SHA="+sha, "GITHUB_RUN_ATTEMPT=1")
		env = append(env, extraEnv...)
		cand := syntheticResult(t, filepath.Join(t.TempDir(), "cand.json"), scale, seed)
		w := map[string]string{"tailgate": bin, "baseline": base, "candidate": cand, "history": "true", "history-store": spec, "upload-artifact": "false", "history-page": "true"}
		return runAction(t, a, w, gh, env)
	}
	sha := func(i int) string { return strings.Repeat(strconv.Itoa(i%10), 40) }

	t.Run("a push to main adds its Result", func(t *testing.T) {
		for i := 1; i <= 4; i++ {
			run := push(t, sha(i), "refs/heads/main", 1, uint64(10+i))
			add := run.step(t, "Add the Result to the history")
			if add.Outcome != "success" || !strings.Contains(add.Log, "recorded "+sha(i)+" target host") || run.Outputs["exit-code"] != "0" {
				t.Fatalf("push %d: outputs %v\n%s", i, run.Outputs, run.Log)
			}
			if run.step(t, "Fetch the history").Outcome != "skipped" {
				t.Errorf("push %d fetched the history for a report line:\n%s", i, run.Log)
			}
			// history-page: the page of the store as it is now, published.
			if page := usesStepNamed(t, run, "Publish the history page"); !page.Ran || page.With["name"] != "tailgate-history-page" {
				t.Errorf("push %d: the history page was not published: %+v", i, page)
			} else if _, err := os.Stat(filepath.Join(page.With["path"], "index.html")); err != nil {
				t.Errorf("push %d: %v", i, err)
			}
		}
		es := historyEntries(t, spec)
		var commits []string
		for _, e := range es {
			commits = append(commits, e.Commit)
			if e.Ref != "main" || e.Target != "host" {
				t.Errorf("entry %+v, want ref main, target host", e)
			}
		}
		if want := []string{sha(1), sha(2), sha(3), sha(4)}; !slices.Equal(commits, want) {
			t.Errorf("the store holds %v, want %v", commits, want)
		}
		s, _ := history.Open(spec)
		v, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		rec, err := v.Record(es[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := "https://github.example/octo/kernel/actions/runs/4242/attempts/1"; rec.Provenance.Run != want {
			t.Errorf("the record's run %q, want %q", rec.Provenance.Run, want)
		}
		if ps := v.Check(); len(ps) != 0 {
			t.Errorf("history check: %v", ps)
		}
	})

	t.Run("a push elsewhere adds nothing", func(t *testing.T) {
		before := len(historyEntries(t, spec))
		run := push(t, sha(7), "refs/heads/feature", 1, 17)
		if run.step(t, "Add the Result to the history").Outcome != "skipped" || len(historyEntries(t, spec)) != before {
			t.Errorf("a push to feature was added to main's history:\n%s", run.Log)
		}
	})

	t.Run("a push that loses the race is redone on the new tip", func(t *testing.T) {
		// A git that, at the action's first push, lets another job's add
		// land first: the action's push is then not a fast-forward.
		wrap := t.TempDir()
		racer := syntheticResult(t, filepath.Join(wrap, "racer.json"), 1, 25)
		script := `#!/bin/bash
if [ "$1" = push ] && [ ! -e "` + wrap + `/raced" ]; then
  touch "` + wrap + `/raced"
  "` + bin + `" history add "` + spec + `" "` + racer + `" --commit ` + sha(5) + ` --ref main >&2 || exit 1
fi
exec "` + realGit + `" "$@"
`
		if err := os.WriteFile(filepath.Join(wrap, "git"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		run := push(t, sha(6), "refs/heads/main", 1, 26, "PATH="+wrap+":"+os.Getenv("PATH"))
		if add := run.step(t, "Add the Result to the history"); add.Outcome != "success" || !strings.Contains(add.Log, "recorded "+sha(6)) {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if _, err := os.Stat(filepath.Join(wrap, "raced")); err != nil {
			t.Fatal("the other job's add never ran")
		}
		es := historyEntries(t, spec)
		var commits []string
		for _, e := range es {
			commits = append(commits, e.Commit)
		}
		if !slices.Contains(commits, sha(5)) || !slices.Contains(commits, sha(6)) {
			t.Errorf("the store holds %v, want both racers, %s and %s", commits, sha(5)[:7], sha(6)[:7])
		}
		// The action's commit is on top of the other's: redone, not forced.
		out, err := exec.Command(realGit, "-C", strings.TrimSuffix(strings.TrimPrefix(spec, "git:"), "#tailgate-history"), "log", "--format=%s", "-2", "tailgate-history").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(strings.TrimSpace(string(out)), "\n"); len(got) != 2 || !strings.Contains(got[0], sha(6)[:7]) || !strings.Contains(got[1], sha(5)[:7]) {
			t.Errorf("the branch's last commits %q, want the action's add on the other's", got)
		}
	})

	// pull runs the action as a pull request's job, its candidate a
	// Result at scale, against the history in store.
	pull := func(t *testing.T, store string, scale float64) *actionRun {
		t.Helper()
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "GITHUB_BASE_REF=main", "GITHUB_HEAD_REF=topic")
		cand := syntheticResult(t, filepath.Join(t.TempDir(), "cand.json"), scale, 31)
		w := map[string]string{"tailgate": bin, "baseline": base, "candidate": cand, "history": "true", "history-store": store,
			"history-commits": "5", "comment": "true", "github-token": "ghs_test", "upload-artifact": "false"}
		return runAction(t, a, w, gh, env)
	}

	t.Run("a pull request's report shows main's last commits", func(t *testing.T) {
		run := pull(t, spec, 1.4)
		if run.Outputs["exit-code"] != "1" || run.step(t, "Fetch the history").Outcome != "success" || run.step(t, "Add the Result to the history").Outcome != "skipped" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if g := run.step(t, "Gate").Log; !strings.Contains(g, " --history ") || !strings.Contains(g, "--history-ref main --history-n 5") {
			t.Errorf("the gate is not given the history:\n%s", g)
		}
		line := "- `syscall-read` `syscall.read` p99: `"
		for what, text := range map[string]string{"job summary": run.Summary, "report": mustRead(t, run.Outputs["report"])} {
			if !strings.Contains(text, "History (the candidate against main's last commits") || !strings.Contains(text, line) || !strings.Contains(text, "main's last 5 commits") || !strings.Contains(text, "above all 5") {
				t.Errorf("the %s has no history line of main's last 5 commits with the slower head above them all:\n%s", what, text)
			}
		}
		cs := srv.Comments(9)
		if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, line) {
			t.Errorf("the comment has no history line: %+v", cs)
		}
	})

	t.Run("no history branch yet: the report says so", func(t *testing.T) {
		empty := "git:" + bareRepo(t, filepath.Join(t.TempDir(), "empty.git")) + "#tailgate-history"
		run := pull(t, empty, 1.4)
		if f := run.step(t, "Fetch the history"); f.Outcome != "success" || !strings.Contains(f.Log, "has no branch tailgate-history yet") {
			t.Fatalf("Fetch the history:\n%s", run.Log)
		}
		if !strings.Contains(run.Summary, "syscall.read` p99: no commit of main in the history has it") {
			t.Errorf("summary:\n%s", run.Summary)
		}
	})

	t.Run("a store that does not answer: no history line, the gate as it is", func(t *testing.T) {
		run := pull(t, "git:"+filepath.Join(t.TempDir(), "missing.git")+"#tailgate-history", 1.4)
		if run.Outputs["exit-code"] != "1" || !strings.Contains(run.step(t, "Fetch the history").Log, "::warning title=tailgate::history store") || strings.Contains(run.Summary, "History (") {
			t.Errorf("outputs %v\n%s", run.Outputs, run.Log)
		}
	})

	t.Run("bad history-commits", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := map[string]string{"tailgate": bin, "baseline": base, "candidate": base, "history": "true", "history-commits": "twenty"}
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "2" || !strings.Contains(run.Log, `::error title=tailgate::input history-commits: "twenty": want a number of commits`) {
			t.Errorf("outputs %v\n%s", run.Outputs, run.Log)
		}
	})
}
