package github_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// githubScriptShim runs one actions/github-script script as the action
// does (an async function of github, context, core), with the few octokit
// calls the workflows make sent to the fake API as octokit sends them:
// path parameters in the path, every other parameter in the query.
const githubScriptShim = `
const api = process.env.SHIM_API, token = process.env.SHIM_TOKEN;
const context = JSON.parse(process.env.SHIM_CONTEXT);
const [owner, repo] = context.payload.repository.full_name.split('/');
context.repo = { owner, repo };
async function get(path, params) {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const r = await fetch(api + path + '?' + qs, { headers: { authorization: 'Bearer ' + token } });
  if (!r.ok) throw new Error('GET ' + path + ': ' + r.status);
  return { data: await r.json() };
}
const github = { rest: {
  actions: {
    listWorkflowRuns: ({ owner, repo, workflow_id, ...q }) => get('/repos/' + owner + '/' + repo + '/actions/workflows/' + workflow_id + '/runs', q),
    listWorkflowRunArtifacts: ({ owner, repo, run_id, ...q }) => get('/repos/' + owner + '/' + repo + '/actions/runs/' + run_id + '/artifacts', q),
  },
  pulls: { list: ({ owner, repo, ...q }) => get('/repos/' + owner + '/' + repo + '/pulls', q) },
} };
const out = { outputs: {}, warnings: [], failed: '' };
const core = {
  setOutput: (k, v) => { out.outputs[k] = String(v); },
  warning: (m) => { out.warnings.push(String(m)); },
  setFailed: (m) => { out.failed = String(m); },
  info: () => {},
};
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
(async () => {
  try {
    await new AsyncFunction('github', 'context', 'core', require('fs').readFileSync(process.env.SHIM_SCRIPT, 'utf8'))(github, context, core);
  } catch (e) {
    out.failed = String(e); // github-script fails the step on a throw
  }
  console.log(JSON.stringify(out));
})();
`

type scriptOutcome struct {
	Outputs  map[string]string `json:"outputs"`
	Warnings []string          `json:"warnings"`
	Failed   string            `json:"failed"`
}

// githubScripts returns the script and env of every github-script step
// named name in a workflow file, one per job.
func githubScripts(t *testing.T, file, name string) []workflowScript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", file))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	var out []workflowScript
	for j, job := range w.Jobs {
		for _, s := range job.Steps {
			if s.Name == name && strings.HasPrefix(s.Uses, "actions/github-script@") {
				out = append(out, workflowScript{Job: j, Script: s.With["script"], Env: s.Env})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no github-script step %q", file, name)
	}
	return out
}

type workflowScript struct {
	Job, Script string
	Env         map[string]string
}

// runScript runs script against srv with the event payload and env.
func runScript(t *testing.T, srv *githubtest.Server, script string, payload map[string]any, ref string, env map[string]string) scriptOutcome {
	t.Helper()
	// actions/github-script runs its scripts in node; CI's runners have it.
	testenv.Need(t, testenv.Optional(testenv.Tool("node", "Debian: nodejs")))
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shim, file := filepath.Join(dir, "shim.js"), filepath.Join(dir, "script.js")
	os.WriteFile(shim, []byte(githubScriptShim), 0o644)
	os.WriteFile(file, []byte(script), 0o644)
	ctx, _ := json.Marshal(map[string]any{"payload": payload, "ref": ref})
	cmd := exec.Command(node, shim)
	cmd.Env = append(os.Environ(), "SHIM_API="+srv.URL, "SHIM_TOKEN="+srv.Token, "SHIM_CONTEXT="+string(ctx), "SHIM_SCRIPT="+file)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var o scriptOutcome
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("shim output %q: %v", b, err)
	}
	return o
}

// TestForkCommentRecipe: the pull-request runs of latency-gate.yml write
// nothing; latency-gate-comment.yml, run by workflow_run, finds the pull
// request by the run's head commit and repository (a fork's run carries
// no pull_requests), comments on one gate report per gate job, and takes
// no number from the run's artifact.
func TestForkCommentRecipe(t *testing.T) {
	gate, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "latency-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var g workflowDoc
	if err := yaml.Unmarshal(gate, &g); err != nil {
		t.Fatal(err)
	}
	var reports []string
	for name, job := range g.Jobs {
		perms := job.Permissions
		if perms == nil {
			perms = g.Permissions
		}
		if ws := writes(perms); len(ws) > 0 {
			t.Errorf("latency-gate.yml: job %s writes %v; a fork's pull request runs it", name, ws)
		}
		for _, s := range job.Steps {
			if s.usesAction() {
				if s.with("comment") == "true" {
					t.Errorf("job %s comments from the pull request's run", name)
				}
				reports = append(reports, strings.TrimPrefix(s.with("artifact-name"), "tailgate-result-"))
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "latency-gate-comment.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cw workflowDoc
	if err := yaml.Unmarshal(raw, &cw); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Report []string `yaml:"report"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cw.triggers(), []string{"workflow_run"}) {
		t.Errorf("latency-gate-comment.yml runs on %v, want workflow_run alone", cw.triggers())
	}
	matrix := c.Jobs["comment"].Strategy.Matrix.Report
	for _, r := range reports {
		// The VM job's artifact name is per matrix entry.
		if !strings.Contains(r, "${{") && !slices.Contains(matrix, r) {
			t.Errorf("no comment for the report of gate %s", r)
		}
	}
	if text := string(raw); strings.Contains(text, "head_branch }}") || strings.Contains(text, "pull_requests[") {
		t.Error("latency-gate-comment.yml puts the pull request's branch into an expression, or trusts workflow_run.pull_requests")
	}

	scripts := githubScripts(t, "latency-gate-comment.yml", "Find the pull request")
	repo := githubtest.Repo(10, "octo/kernel")
	fork := githubtest.Repo(66, "mallory/kernel")
	other := githubtest.Repo(77, "trudy/kernel")
	run := func(head githubtest.Repository, branch, sha string) map[string]any {
		return map[string]any{"repository": repo, "workflow_run": map[string]any{
			"id": 300, "event": "pull_request", "head_branch": branch, "head_sha": sha, "head_repository": head, "pull_requests": []any{},
		}}
	}
	srv := githubtest.New(t, "octo/kernel", "ghs_tok")
	srv.AddPull(githubtest.PullRequest{Number: 41, State: "open", Head: githubtest.Branch{Ref: "fix", SHA: "f1", Repo: &fork}, Base: githubtest.Branch{Ref: "main", Repo: &repo}})
	srv.AddPull(githubtest.PullRequest{Number: 42, State: "open", Head: githubtest.Branch{Ref: "fix", SHA: "f1", Repo: &other}, Base: githubtest.Branch{Ref: "main", Repo: &repo}})
	srv.AddPull(githubtest.PullRequest{Number: 43, State: "open", Head: githubtest.Branch{Ref: "same-repo", SHA: "s1", Repo: &repo}, Base: githubtest.Branch{Ref: "main", Repo: &repo}})
	for _, tc := range []struct {
		name    string
		payload map[string]any
		want    string
	}{
		{"a fork's pull request", run(fork, "fix", "f1"), "41"},
		{"a same-repository pull request", run(repo, "same-repo", "s1"), "43"},
		{"pushed again since: none", run(fork, "fix", "f0"), ""},
		{"the branch of another fork with the same name and commit: its own", run(other, "fix", "f1"), "42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := runScript(t, srv, scripts[0].Script, tc.payload, "", nil)
			if o.Failed != "" || o.Outputs["number"] != tc.want {
				t.Errorf("%+v, want number %q", o, tc.want)
			}
		})
	}
}
