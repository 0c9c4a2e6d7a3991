package github_test

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// zipDir is dir as an artifact's zip: its files at their paths under it.
func zipDir(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// TestActionBaselineBranch runs the action with baseline: main as a
// workflow's two events would, with the real tailgate on Results made
// here: the first push to main finds no baseline, becomes it and keeps
// it as an artifact; a pull request finds that artifact (main's push
// run's, not a fork's) and is gated against it; a failing push keeps
// nothing.
func TestActionBaselineBranch(t *testing.T) {
	testenv.Need(t, testenv.Feature{Name: "/bin/bash", Use: func() error { _, err := os.Stat("/bin/bash"); return err }, Required: true})
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	bin := buildTailgate(t)
	srv := githubtest.New(t, "octo/kernel", "ghs_test")
	repo := githubtest.Repo(10, "octo/kernel")
	run := func(t *testing.T, event, ref, payload string, scale float64, seed uint64) *actionRun {
		t.Helper()
		gh, env := actionEnv(t, srv, 9)
		gh["event_name"] = event
		ev := filepath.Join(t.TempDir(), "event.json")
		os.WriteFile(ev, []byte(payload), 0o644)
		env = append(env, "GITHUB_EVENT_NAME="+event, "GITHUB_EVENT_PATH="+ev, "GITHUB_REF="+ref,
			"GITHUB_WORKFLOW_REF=octo/kernel/.github/workflows/latency.yml@"+ref)
		cand := syntheticResult(t, filepath.Join(t.TempDir(), "cand.json"), scale, seed)
		w := map[string]string{"tailgate": bin, "baseline": "main", "candidate": cand, "upload-artifact": "false", "github-token": "ghs_test"}
		return runAction(t, a, w, gh, env)
	}
	const push = `{"ref":"refs/heads/main","repository":{"id":10,"full_name":"octo/kernel","default_branch":"main"}}`
	const pr = `{"repository":{"id":10,"full_name":"octo/kernel"},"pull_request":{"number":9,"base":{"ref":"main"}}}`

	var kept string
	t.Run("the first push to main becomes the baseline", func(t *testing.T) {
		r := run(t, "push", "refs/heads/main", push, 1, 1)
		find := r.step(t, "Find the stored baseline")
		if r.Outputs["exit-code"] != "0" || !strings.Contains(find.Log, "no baseline yet") || !strings.Contains(r.step(t, "Gate").Log, "--save-baseline") {
			t.Fatalf("outputs %v\n%s", r.Outputs, r.Log)
		}
		keep := usesStepNamed(t, r, "Keep the stored baseline")
		if !keep.Ran || keep.With["name"] != "tailgate-baseline" {
			t.Fatalf("the baseline was not kept: %+v", keep)
		}
		path := strings.TrimSuffix(keep.With["path"], "/")
		if files, _ := filepath.Glob(filepath.Join(path, "*.json")); len(files) == 0 {
			t.Fatalf("nothing saved in %s", path)
		}
		kept = path
		// Kept past the subtest's temporary files, as the artifact is.
		b := zipDir(t, kept)
		srv.AddRun(githubtest.Run{ID: 100, Workflow: "latency.yml", Event: "push", HeadBranch: "main", HeadSHA: "aaa", Conclusion: "success",
			Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 1, Name: "tailgate-baseline", Zip: b}}})
	})
	if kept == "" {
		t.FailNow()
	}
	// A fork's newer pull-request run from its main, with an artifact of
	// the same name, which must not be the baseline.
	fork := githubtest.Repo(66, "mallory/kernel")
	srv.AddRun(githubtest.Run{ID: 200, Workflow: "latency.yml", Event: "pull_request", HeadBranch: "main", HeadSHA: "bad", Conclusion: "success",
		Repository: repo, HeadRepository: fork, Artifacts: []githubtest.Artifact{{ID: 2, Name: "tailgate-baseline", Zip: []byte("not a zip")}}})

	t.Run("a pull request is gated against main's", func(t *testing.T) {
		r := run(t, "pull_request", "refs/pull/9/merge", pr, 1.4, 2)
		if r.Outputs["exit-code"] != "1" || !strings.Contains(r.step(t, "Find the stored baseline").Log, "of run 100, the push of aaa to main") {
			t.Fatalf("want a regression against run 100's baseline; outputs %v\n%s", r.Outputs, r.Log)
		}
		if strings.Contains(r.step(t, "Gate").Log, "--save-baseline") || usesStepNamed(t, r, "Keep the stored baseline").Ran {
			t.Errorf("a pull request saved or kept a baseline:\n%s", r.Log)
		}
	})
	t.Run("a failing push keeps nothing", func(t *testing.T) {
		r := run(t, "push", "refs/heads/main", push, 1.4, 3)
		if r.Outputs["exit-code"] != "1" || usesStepNamed(t, r, "Keep the stored baseline").Ran {
			t.Errorf("outputs %v; kept: %v\n%s", r.Outputs, usesStepNamed(t, r, "Keep the stored baseline").Ran, r.Log)
		}
	})
	t.Run("a bad branch name is refused", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		r := runAction(t, a, map[string]string{"tailgate": bin, "baseline": "branch:-x", "candidate": kept}, gh, env)
		if r.Outputs["exit-code"] != "2" || !strings.Contains(r.Log, "input baseline") {
			t.Errorf("outputs %v\n%s", r.Outputs, r.Log)
		}
	})
}

// usesStepNamed is the uses: step named name.
func usesStepNamed(t *testing.T, r *actionRun, name string) usedStep {
	t.Helper()
	for _, u := range r.Uses {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no uses: step %q", name)
	return usedStep{}
}
