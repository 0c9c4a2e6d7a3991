package github_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/github"
	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// recipeWorkflow is what a runner reads of a workflow of one job.
type recipeWorkflow struct {
	Jobs map[string]struct {
		Steps []recipeStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type recipeStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// sectionBlocks returns the ```yaml blocks of the section of page (a path
// under the repository) headed heading, up to the next heading of its
// level or above.
func sectionBlocks(t *testing.T, page, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var blocks, block []string
	inSection, fence := false, ""
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if trimmed == "```" {
				if fence == "yaml" && inSection {
					blocks = append(blocks, strings.Join(block, "\n")+"\n")
				}
				fence, block = "", nil
			} else {
				block = append(block, line)
			}
		case strings.HasPrefix(trimmed, "```"):
			fence = strings.TrimPrefix(trimmed, "```")
			if fence == "" {
				fence = "text"
			}
		case line == heading:
			inSection = true
		case inSection && strings.HasPrefix(line, "#"):
			if l := len(line) - len(strings.TrimLeft(line, "#")); l <= level && strings.HasPrefix(line[l:], " ") {
				return blocks
			}
		}
	}
	if !inSection {
		t.Fatalf("%s: no section %q", page, heading)
	}
	return blocks
}

// recipe returns the scenario and the workflow of a section: its one
// YAML block with jobs: and, if it has one, its one without.
func recipe(t *testing.T, page, heading string) (scenario string, w recipeWorkflow) {
	t.Helper()
	var workflows []string
	for _, b := range sectionBlocks(t, page, heading) {
		if strings.HasPrefix(b, "jobs:\n") || strings.Contains(b, "\njobs:\n") {
			workflows = append(workflows, b)
		} else if scenario == "" {
			scenario = b
		} else {
			t.Fatalf("%s %q: two YAML blocks that are not workflows", page, heading)
		}
	}
	if len(workflows) != 1 {
		t.Fatalf("%s %q: %d workflows, want one", page, heading, len(workflows))
	}
	if err := yaml.UnmarshalWithOptions([]byte(workflows[0]), &w); err != nil {
		t.Fatalf("%s %q: %v", page, heading, err)
	}
	if len(w.Jobs) != 1 {
		t.Fatalf("%s %q: %d jobs, want one", page, heading, len(w.Jobs))
	}
	return scenario, w
}

func (w recipeWorkflow) steps() []recipeStep {
	for _, j := range w.Jobs {
		return j.Steps
	}
	return nil
}

// The user's repository: an echo server and its load generator (the
// README's exec example), a Makefile with the targets the recipe's build
// step makes, and the recipe's scenario at the root. Built reproducibly
// (no VCS stamp, no tree path), so that the client, the same source in
// both commits, is the same file in both trees.
const (
	ownGoMod    = "module example.com/echo\n\ngo 1.22\n"
	ownMakefile = "bin/server: server/main.go\n\tCGO_ENABLED=0 go build -trimpath -buildvcs=false -o $@ ./server\n\n" +
		"bin/client: client/main.go\n\tCGO_ENABLED=0 go build -trimpath -buildvcs=false -o $@ ./client\n"
)

// TestOwnProgramRecipe runs docs/action.md's "Gate your own program" as a
// runner runs it, read from the page: a repository whose pull request
// changes its server, the recipe's checkouts (as actions/checkout makes
// them: init, fetch of the one commit, detached checkout), its build step
// run in the workspace, and then action.yml's steps with the workflow's
// inputs and a short budget, against a fake API. tailgate is built from
// this source, standing in for the v0 release the recipe names. The gate
// is real: each side runs its own tree's programs, traced.
func TestOwnProgramRecipe(t *testing.T) {
	scenario, w := recipe(t, "docs/action.md", "## Gate your own program")
	if scenario == "" {
		t.Fatal(`docs/action.md "Gate your own program" shows no scenario`)
	}
	// The README's copy is the same workflow, bar the step names.
	_, short := recipe(t, "README.md", "### Your own program")
	unnamed := func(steps []recipeStep) []recipeStep {
		out := slices.Clone(steps)
		for i := range out {
			out[i].Name = ""
		}
		return out
	}
	if d := cmp.Diff(unnamed(w.steps()), unnamed(short.steps())); d != "" {
		t.Errorf("README.md's own-program workflow differs from docs/action.md's (-docs +README):\n%s", d)
	}

	// Another port than the recipe's, so that a copy someone runs does not
	// collide with the test.
	port := strconv.Itoa(20000 + rand.IntN(20000))
	scenario = strings.ReplaceAll(scenario, "7071", port)
	client, err := os.ReadFile(filepath.Join(repoRoot, "testdata/exec/echo/client/main.go"))
	if err != nil {
		t.Fatal(err)
	}
	server, err := os.ReadFile(filepath.Join(repoRoot, "testdata/exec/echo/server/main.go"))
	if err != nil {
		t.Fatal(err)
	}

	// The origin, with the base commit and the pull request's head on top.
	origin := t.TempDir()
	git(t, origin, "init", "-q", "-b", "main")
	git(t, origin, "config", "uploadpack.allowAnySHA1InWant", "true") // as GitHub serves a fetch by sha
	writeTree(t, origin, map[string]string{
		"go.mod": ownGoMod, "Makefile": ownMakefile, "latency.yaml": scenario,
		"server/main.go": string(server), "client/main.go": string(client),
	})
	git(t, origin, "add", ".")
	git(t, origin, "commit", "-q", "-m", "echo server")
	baseSHA := git(t, origin, "rev-parse", "HEAD")
	changed := strings.Replace(string(server), "\tflag.Parse()\n", "\tflag.Parse()\n\tlog.SetPrefix(\"echo-server: \")\n", 1)
	if changed == string(server) {
		t.Fatal("testdata/exec/echo/server/main.go: no flag.Parse() line to change the server after")
	}
	writeTree(t, origin, map[string]string{"server/main.go": changed})
	git(t, origin, "commit", "-q", "-am", "server: log with a prefix")
	headSHA := git(t, origin, "rev-parse", "HEAD")

	srv := githubtest.New(t, "octo/echo", "ghs_test")
	gh, env := actionEnv(t, srv, 7)
	workspace := gh["workspace"]
	// The pull request's merge commit is its head here: head's parent is
	// the base.
	gh["event.pull_request.base.sha"] = baseSHA
	// A runner's expressions outside the action: the workflow's with:.
	job := newRunner(t, &actionFile{}, nil, gh, env)
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))

	var run *actionRun
	start := time.Now()
	for i, s := range w.steps() {
		name := s.Name
		if name == "" {
			name = "step " + strconv.Itoa(i+1)
		}
		with := map[string]string{}
		for k, v := range s.With {
			with[k] = job.interpolate(v)
		}
		switch action, _, _ := strings.Cut(s.Uses, "@"); {
		case action == "actions/checkout":
			ref := with["ref"]
			if ref == "" {
				ref = headSHA
			}
			dir := filepath.Join(workspace, with["path"])
			os.MkdirAll(dir, 0o755)
			git(t, dir, "init", "-q")
			git(t, dir, "fetch", "-q", "--depth=1", "file://"+origin, ref)
			git(t, dir, "checkout", "-q", "--detach", "FETCH_HEAD")
		case action == "tailgate-ci/tailgate" || s.Uses == "./":
			// Short, as a test's gate must be: the verdict is not what is
			// tested here, only that there is one.
			with["budget"] = "15s"
			run = runAction(t, a, with, gh, env)
		case s.Uses != "":
			t.Fatalf("%s: uses %s, which this test does not stand in for", name, s.Uses)
		default:
			out := &actionRun{}
			job.runStep(actionStep{Name: name, Run: s.Run, Shell: "bash", Env: s.Env}, out)
			if st := out.Steps[0]; st.Outcome != "success" {
				t.Fatalf("%s: exit %d:\n%s", name, st.Code, st.Log)
			}
		}
	}
	if run == nil {
		t.Fatal("the workflow does not use the action")
	}
	t.Logf("the workflow's steps took %s", time.Since(start).Round(time.Second))

	code := run.Outputs["exit-code"]
	if code != "0" && code != "1" {
		t.Fatalf("exit code %q, want a verdict (0 or 1)\n%s", code, run.Log)
	}
	if got := run.step(t, "Outcome").Code; strconv.Itoa(got) != code {
		t.Errorf("Outcome exits %d, the gate %s", got, code)
	}
	for _, s := range run.Steps {
		if s.Name != "Outcome" && s.Outcome == "failure" {
			t.Errorf("step %q failed:\n%s", s.Name, s.Log)
		}
	}

	// Each side ran its own tree's programs, as built there.
	results := strings.Fields(run.Outputs["results"])
	if len(results) != 2 {
		t.Fatalf("results %q: want base's and head's\n%s", run.Outputs["results"], run.Log)
	}
	sides := []struct {
		name, dir, commit, result string
	}{
		{"base", filepath.Join(workspace, "base"), baseSHA, ""},
		{"head", workspace, headSHA, ""},
	}
	digest := map[string]string{} // side/program → sha256
	for i := range sides {
		side := &sides[i]
		for _, r := range results {
			if filepath.Base(r) == "result-"+side.name+".json" {
				side.result = r
			}
		}
		if side.result == "" {
			t.Fatalf("results %q: none of %s", results, side.name)
		}
		res, err := result.Load(side.result)
		if err != nil {
			t.Fatal(err)
		}
		if res.Target.Name != side.name || res.Target.Dir != side.dir {
			t.Errorf("%s: target %+v, want %s with dir %s", side.result, res.Target, side.name, side.dir)
		}
		sc := res.Find("echo-server")
		if sc == nil {
			t.Fatalf("%s: no echo-server scenario", side.result)
		}
		var roles []string
		for _, e := range sc.Executables {
			roles = append(roles, e.Role)
			want := map[string]string{"command": "server", "load": "client"}[e.Role]
			if want == "" {
				continue
			}
			path := filepath.Join(side.dir, "bin", want)
			if e.Path != path || e.SHA256 != fileSHA256(t, path) || e.GitHead != side.commit || e.GitDirty {
				t.Errorf("%s: %s %+v, want %s, sha256 %s, git head %s, clean", side.name, e.Role, e, path, fileSHA256(t, path), side.commit)
			}
			digest[side.name+"/"+want] = e.SHA256
		}
		if !slices.Contains(roles, "command") || !slices.Contains(roles, "load") {
			t.Errorf("%s: executables %+v, want the command and the load", side.name, sc.Executables)
		}
		if m := sc.Metrics["request.server"]; m == nil || len(m.Trials) == 0 || m.Trials[0].Ops == 0 {
			t.Errorf("%s: no request.server trial with ops (the recipe names no tracers: the request tracer is its default): %+v", side.name, m)
		}
	}
	if digest["base/server"] == digest["head/server"] || digest["base/client"] != digest["head/client"] {
		t.Errorf("sha256 %v: want the server's to differ and the client's not", digest)
	}

	// The report says what differs, in the job summary and the comment too.
	report := mustRead(t, filepath.Join(runnerTemp(env), "tailgate", "report.txt"))
	var differs string
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "differs:") {
			differs = line
		}
	}
	for _, want := range []string{
		"dir " + sides[0].dir + " → " + sides[1].dir,
		"echo-server command sha256 " + digest["base/server"][:12] + " → " + digest["head/server"][:12],
		"echo-server command commit " + baseSHA[:12] + " → " + headSHA[:12],
	} {
		if !strings.Contains(differs, want) {
			t.Errorf("report's differs line %q: no %q\n%s", differs, want, report)
		}
	}
	if strings.Contains(differs, digest["base/client"][:12]) {
		t.Errorf("report's differs line %q names the client, which is the same on both sides", differs)
	}
	if !strings.Contains(run.Summary, "What differs") || !strings.Contains(run.Summary, digest["head/server"][:12]) ||
		!strings.Contains(run.Summary, "tailgate exit "+code) {
		t.Errorf("job summary:\n%s", run.Summary)
	}
	if cs := srv.Comments(7); len(cs) != 1 || !strings.HasPrefix(cs[0].Body, github.DefaultMarker) || !strings.Contains(cs[0].Body, "What differs") {
		t.Errorf("pull-request comments: %+v", cs)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
