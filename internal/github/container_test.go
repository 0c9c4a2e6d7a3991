package github_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestActionInContainer runs the action's steps as a container job runs
// them (container: debian:12, the README's recipe for debian: kernels):
// the runner host's work directory, /home/runner/work, is /__w in the
// container, and the github.action_path, github.workspace and runner.temp
// contexts still give the host's paths, while GITHUB_ACTION_PATH,
// GITHUB_WORKSPACE and RUNNER_TEMP give the container's
// (actions/runner#2185, #2058). Here the host's work directory is a
// file, so that a step, or an action's with:, that goes there fails.
func TestActionInContainer(t *testing.T) {
	testenv.Need(t, testenv.Feature{Name: "/bin/bash", Use: func() error { _, err := os.Stat("/bin/bash"); return err }, Required: true})
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	dir := t.TempDir()
	host := filepath.Join(dir, "home-runner-work")
	if err := os.WriteFile(host, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "__w") // the container's view of it
	// Where the runner unpacks `uses: tailgate-ci/tailgate@main`.
	actionPath := filepath.Join(w, "_actions", "tailgate-ci", "tailgate", "main")
	workspace := filepath.Join(w, "kernel", "kernel")
	temp := filepath.Join(w, "_temp")
	for _, d := range []string{filepath.Dir(actionPath), workspace, temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(repoRoot, actionPath); err != nil {
		t.Fatal(err)
	}
	syntheticResult(t, filepath.Join(workspace, "base.json"), 1, 1)
	syntheticResult(t, filepath.Join(workspace, "slow.json"), 1.4, 2)

	gh := map[string]string{
		"action_path":       filepath.Join(host, "_actions", "tailgate-ci", "tailgate", "main"),
		"action_ref":        "",
		"action_repository": "",
		"event_name":        "push",
		"repository":        "octo/kernel",
		"server_url":        "https://github.example",
		"run_id":            "4242",
		"token":             "ghs_test",
		"workspace":         filepath.Join(host, "kernel", "kernel"),
	}
	env := []string{
		"GITHUB_ACTION_PATH=" + actionPath,
		"GITHUB_EVENT_NAME=push",
		"GITHUB_REPOSITORY=octo/kernel",
		"GITHUB_SERVER_URL=https://github.example",
		"GITHUB_RUN_ID=4242",
		"GITHUB_WORKSPACE=" + workspace,
		"RUNNER_TEMP=" + temp,
		"RUNNER_OS=Linux",
		"RUNNER_ARCH=X64",
	}
	// Relative paths, as a workflow gives them: composite steps start in
	// the workspace.
	with := map[string]string{"candidate": "slow.json", "baseline": "base.json"}
	cache := newCacheStore(t)
	hostTemp := filepath.Join(host, "_temp")

	check := func(t *testing.T, run *actionRun) {
		t.Helper()
		if run.Outputs["exit-code"] != "1" || run.step(t, "Outcome").Code != 1 {
			t.Fatalf("want the gate's regression, exit 1; outputs %v\n%s", run.Outputs, run.Log)
		}
		for _, s := range run.Steps {
			if s.Name != "Outcome" && s.Outcome == "failure" {
				t.Errorf("step %q failed:\n%s", s.Name, s.Log)
			}
			if strings.Contains(s.Log, host) {
				t.Errorf("step %q went to the host's path %s:\n%s", s.Name, host, s.Log)
			}
		}
		for _, u := range run.Uses {
			for k, v := range u.With {
				if strings.Contains(v, host) {
					t.Errorf("%s: with %s: %q is the host's path, and the action runs in the container", u.Uses, k, v)
				}
			}
		}
		if got := run.Outputs["result"]; got != "slow.json" {
			t.Errorf("output result %q, want slow.json", got)
		}
		upload := usesStepNamed(t, run, "Upload the Result")
		for _, p := range strings.Fields(upload.With["path"]) {
			if !filepath.IsAbs(p) {
				p = filepath.Join(workspace, p)
			}
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("artifact path %s matches no file", p)
			}
		}
		if !strings.Contains(run.Summary, "regression in 1 gated percentile") || !strings.Contains(run.Summary, "actions/runs/4242") {
			t.Errorf("summary:\n%s", run.Summary)
		}
	}

	t.Run("built from the action's source", func(t *testing.T) {
		run := runAction(t, a, with, gh, env, withCache(cache), inContainer(hostTemp))
		check(t, run)
		if l := run.step(t, "Build tailgate").Log; !strings.Contains(l, "building tailgate from "+actionPath+" (main)") || !strings.Contains(l, "tailgate main (commit ") {
			t.Errorf("Build tailgate: want a build of %s at its ref, main, read from the runner's _actions path:\n%s", actionPath, l)
		}
		setup := usesStep(t, run, "actions/setup-go@")
		if !setup.Ran {
			t.Error("setup-go did not run before the build")
		}
		for _, k := range []string{"go-version-file", "cache-dependency-path"} {
			if _, err := os.Stat(setup.With[k]); err != nil {
				t.Errorf("setup-go %s: %v", k, err)
			}
		}
		restore, save := usesStep(t, run, "actions/cache/restore@"), usesStep(t, run, "actions/cache/save@")
		build := filepath.Join(temp, "tailgate-build")
		if restore.With["path"] != build || save.With["path"] != build || !save.Ran || len(cache.Saved) != 1 {
			t.Errorf("build cache: restore %+v, save %+v, saved %v; want %s", restore, save, cache.Saved, build)
		}
		if run.Outputs["tailgate"] != filepath.Join(build, "tailgate") {
			t.Errorf("output tailgate %q", run.Outputs["tailgate"])
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	// The next job starts with an empty RUNNER_TEMP and restores the build
	// from the cache, to the container's path the build step reads.
	os.RemoveAll(temp)
	os.MkdirAll(temp, 0o755)

	t.Run("the build comes back from the cache", func(t *testing.T) {
		run := runAction(t, a, with, gh, env, withCache(cache), inContainer(hostTemp))
		check(t, run)
		if l := run.step(t, "Build tailgate").Log; !strings.Contains(l, "using the cached build of the action's source: tailgate main") {
			t.Errorf("Build tailgate: want the cached build:\n%s", l)
		}
		if usesStep(t, run, "actions/setup-go@").Ran {
			t.Error("set up Go with the build in the cache")
		}
	})
}
