package github_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/rhysd/actionlint"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// newLinter is actionlint as CI runs it: with shellcheck over every
// run: script, and the pinned actions' inputs known (registerPins).
func newLinter(t *testing.T, out *bytes.Buffer) *actionlint.Linter {
	t.Helper()
	registerPins(t)
	l, err := actionlint.NewLinter(out, &actionlint.LinterOptions{Shellcheck: shellcheck(t)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// shellcheck is the shellcheck for actionlint to run, "" (none) where
// there is none; on CI its absence is a failure, not a lint without it.
func shellcheck(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("shellcheck")
	if err == nil {
		return p
	}
	if testenv.Strict() {
		t.Fatal("needs shellcheck for actionlint to check the run: scripts (scripts/install-deps.sh installs it)")
	}
	t.Log("no shellcheck: the run: scripts are not checked")
	return ""
}

// lint runs actionlint over files (paths inside the repository, so that
// `uses: ./` is checked against action.yml's inputs) and returns its
// findings, one line each.
func lint(t *testing.T, paths ...string) []string {
	t.Helper()
	var out bytes.Buffer
	errs, err := newLinter(t, &out).LintFiles(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind))
	}
	return msgs
}

// lintBytes lints one workflow held in memory, named name; line0 is the
// line of its first line in the file it comes from.
func lintBytes(t *testing.T, name string, line0 int, content []byte) []string {
	t.Helper()
	errs, err := newLinter(t, &bytes.Buffer{}).Lint(name, content, nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%s:%d:%d: %s [%s]", name, line0+e.Line-1, e.Column, e.Message, e.Kind))
	}
	return msgs
}

func workflowFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ci.yml", "latency-gate.yml"} {
		if !slices.Contains(files, filepath.Join(repoRoot, ".github", "workflows", want)) {
			t.Errorf("no .github/workflows/%s", want)
		}
	}
	return files
}

func TestWorkflowsLint(t *testing.T) {
	for _, msg := range lint(t, workflowFiles(t)...) {
		t.Error(msg)
	}
}

// actionAsWorkflow wraps the action's steps in a reusable workflow whose
// inputs are the action's, so that actionlint checks the steps as it
// checks a job: expressions, contexts, inputs, step ids and outputs, and
// the `with:` of the actions they use.
func actionAsWorkflow(t *testing.T, a *actionFile) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs struct {
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]any{}
	for name := range a.Inputs {
		inputs[name] = map[string]any{"type": "string", "required": false}
	}
	wf := map[string]any{
		"name": "action.yml as a workflow",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-24.04", "steps": doc.Runs.Steps}},
	}
	b, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestActionLint(t *testing.T) {
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	for _, msg := range lintBytes(t, "action.yml steps as a workflow", 1, actionAsWorkflow(t, a)) {
		t.Error(msg)
	}
}

// TestLintCatches makes sure the checks above can fail.
func TestLintCatches(t *testing.T) {
	bad := []byte(`on:
  workflow_call:
    inputs:
      baseline: {type: string}
jobs:
  j:
    runs-on: ubuntu-24.04
    steps:
      - run: echo ${{ inputs.baselin }}
      - run: rm -rf $RUNNER_TEMP/x
      - uses: actions/upload-artifact@v4
        with:
          nmae: x
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          refs: main
`)
	msgs := strings.Join(lintBytes(t, "bad.yml", 1, bad), "\n")
	wants := []string{`"baselin"`, `"nmae"`, `"refs"`} // refs: of a pinned action
	if shellcheck(t) != "" {
		wants = append(wants, "SC2086") // the unquoted $RUNNER_TEMP
	}
	for _, want := range wants {
		if !strings.Contains(msgs, want) {
			t.Errorf("actionlint did not flag %s:\n%s", want, msgs)
		}
	}
	a := &actionFile{Inputs: map[string]actionInput{"baseline": {Required: true}, "candidate": {}}}
	problems := checkActionUses(a, "bad.yml", []byte(`jobs:
  j:
    steps:
      - uses: tailgate-ci/tailgate@v1
        with:
          candidate: merged.json
          threshold: p99=5%
`))
	if len(problems) != 2 || !strings.Contains(problems[0]+problems[1], `"threshold"`) || !strings.Contains(problems[0]+problems[1], `"baseline"`) {
		t.Errorf("checkActionUses: %q", problems)
	}
}

var inputRef = regexp.MustCompile(`\binputs\.([A-Za-z0-9_-]+)`)

// TestActionInputs: every inputs.X the action refers to is declared, every
// declared input is used, and the outputs name steps that exist.
func TestActionInputs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	used := map[string]bool{}
	for _, m := range inputRef.FindAllStringSubmatch(string(raw), -1) {
		used[m[1]] = true
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which is not declared", m[1])
		}
	}
	for name, in := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s is declared but never used", name)
		}
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	ids := map[string]bool{}
	for _, s := range a.Runs.Steps {
		ids[s.ID] = true
	}
	stepRef := regexp.MustCompile(`\bsteps\.([A-Za-z0-9_-]+)\.outputs\.`)
	for name, o := range a.Outputs {
		for _, m := range stepRef.FindAllStringSubmatch(o.Value, -1) {
			if !ids[m[1]] {
				t.Errorf("output %s refers to step %s, which does not exist", name, m[1])
			}
		}
	}
}

// checkActionUses returns a line for every step of a workflow that uses
// this action (as ./ or tailgate-ci/tailgate@REF) with an input the action
// does not declare, or without a required one.
func checkActionUses(a *actionFile, name string, content []byte) []string {
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string         `yaml:"name"`
				Uses string         `yaml:"uses"`
				With map[string]any `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(content, &wf); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var problems []string
	jobs := make([]string, 0, len(wf.Jobs))
	for j := range wf.Jobs {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		for i, s := range wf.Jobs[j].Steps {
			if s.Uses != "./" && !strings.HasPrefix(s.Uses, "tailgate-ci/tailgate@") {
				continue
			}
			where := fmt.Sprintf("%s: job %s step %d (%s)", name, j, i+1, s.Uses)
			var keys []string
			for k := range s.With {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if _, ok := a.Inputs[k]; !ok {
					problems = append(problems, fmt.Sprintf("%s: with %q is not an input of action.yml", where, k))
				}
			}
			var req []string
			for k, in := range a.Inputs {
				if _, ok := s.With[k]; in.Required && !ok {
					req = append(req, k)
				}
			}
			sort.Strings(req)
			for _, k := range req {
				problems = append(problems, fmt.Sprintf("%s: required input %q is missing", where, k))
			}
		}
	}
	return problems
}

// docWorkflow is a workflow shown in the README or a docs/ page, to be
// copied as it is.
type docWorkflow struct {
	File    string // README.md, docs/NAME.md
	Line    int    // of its first line
	Content []byte
}

func (w docWorkflow) Name() string { return fmt.Sprintf("%s:%d", w.File, w.Line) }

// docWorkflows returns the YAML blocks of the README and the docs/ pages
// that are whole workflows (they have jobs:), wherever they stand.
func docWorkflows(t *testing.T) []docWorkflow {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docWorkflow
	readme := 0
	for _, page := range append([]string{filepath.Join(repoRoot, "README.md")}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, page)
		var block []string
		in, start := false, 0
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case !in && strings.TrimSpace(line) == "```yaml":
				in, start, block = true, i+2, nil
			case in && strings.TrimSpace(line) == "```":
				in = false
				content := strings.Join(block, "\n") + "\n"
				if strings.HasPrefix(content, "jobs:\n") || strings.Contains(content, "\njobs:\n") {
					out = append(out, docWorkflow{File: rel, Line: start, Content: []byte(content)})
					if rel == "README.md" {
						readme++
					}
				}
			case in:
				block = append(block, line)
			}
		}
	}
	if readme == 0 {
		t.Fatal("README.md shows no workflow to copy")
	}
	return out
}

func TestWorkflowsUseDeclaredInputs(t *testing.T) {
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	uses := 0
	check := func(name string, content []byte) {
		for _, p := range checkActionUses(a, name, content) {
			t.Error(p)
		}
		if bytes.Contains(content, []byte("uses: ./\n")) || bytes.Contains(content, []byte("uses: tailgate-ci/tailgate@")) {
			uses++
		}
	}
	for _, f := range workflowFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(filepath.Base(f), b)
	}
	for _, w := range docWorkflows(t) {
		check(w.Name(), w.Content)
		for _, msg := range lintBytes(t, w.File, w.Line, w.Content) {
			t.Error(msg)
		}
	}
	if uses < 2 {
		t.Errorf("the action is used in %d workflows; want the example and the README's", uses)
	}
}

// workflowDoc is what the policy checks below read of a workflow.
type workflowDoc struct {
	On          any                    `yaml:"on"`
	Permissions any                    `yaml:"permissions"`
	Concurrency any                    `yaml:"concurrency"`
	Jobs        map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	If          string         `yaml:"if"`
	Permissions any            `yaml:"permissions"`
	Concurrency any            `yaml:"concurrency"`
	Strategy    map[string]any `yaml:"strategy"`
	Steps       []workflowStep `yaml:"steps"`
}

type workflowStep struct {
	Name string         `yaml:"name"`
	Uses string         `yaml:"uses"`
	Run  string         `yaml:"run"`
	With map[string]any `yaml:"with"`
}

func (s workflowStep) usesAction() bool {
	return s.Uses == "./" || strings.HasPrefix(s.Uses, "tailgate-ci/tailgate@")
}

func (s workflowStep) with(k string) string {
	v, _ := s.With[k].(string)
	return v
}

// triggers lists the events of on:, in any of its three spellings.
func (w workflowDoc) triggers() []string {
	switch on := w.On.(type) {
	case string:
		return []string{on}
	case []any:
		var out []string
		for _, e := range on {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case map[string]any:
		var out []string
		for e := range on {
			out = append(out, e)
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// writes lists the scopes perms grants write to.
func writes(perms any) []string {
	switch p := perms.(type) {
	case string:
		if p == "write-all" {
			return []string{"all"}
		}
	case map[string]any:
		var out []string
		for scope, v := range p {
			if v == "write" {
				out = append(out, scope)
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// onPullRequests says whether job can run for a pull request.
func onPullRequests(w workflowDoc, job workflowJob) bool {
	pr := slices.ContainsFunc(w.triggers(), func(e string) bool { return strings.HasPrefix(e, "pull_request") })
	return pr && !strings.Contains(job.If, "github.event_name == 'push'")
}

// checkWorkflowPolicy returns a line for each rule a workflow breaks:
//   - permissions at the top write nothing but the pull-request comment; a
//     job that writes more says so itself;
//   - a job that may write the repository (anything but the pull-request
//     comment) never runs for a pull request, and runs in a concurrency
//     group, so that two pushes do not race;
//   - a pull request's gate reads its baseline from the base branch (a
//     checkout of github.base_ref, or an artifact of another run), never
//     from the pull request's own tree, which it could edit;
//   - no job that uses the action installs a browser.
func checkWorkflowPolicy(name string, content []byte) []string {
	var w workflowDoc
	if err := yaml.Unmarshal(content, &w); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var problems []string
	if w.Permissions == nil {
		problems = append(problems, name+": no top-level permissions: the token gets the repository's default, often write")
	} else if ws := slices.DeleteFunc(writes(w.Permissions), func(s string) bool { return s == "pull-requests" }); len(ws) > 0 {
		problems = append(problems, fmt.Sprintf("%s: top-level permissions write %s: give write to the one job that needs it", name, strings.Join(ws, ", ")))
	}
	jobs := make([]string, 0, len(w.Jobs))
	for j := range w.Jobs {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		job := w.Jobs[j]
		where := fmt.Sprintf("%s: job %s", name, j)
		perms := job.Permissions
		if perms == nil {
			perms = w.Permissions
		}
		repoWrite := slices.DeleteFunc(writes(perms), func(s string) bool { return s == "pull-requests" })
		if len(repoWrite) > 0 {
			if onPullRequests(w, job) {
				problems = append(problems, fmt.Sprintf("%s writes %s and runs for pull requests: restrict it with if: github.event_name == 'push'", where, strings.Join(repoWrite, ", ")))
			}
			if job.Concurrency == nil && w.Concurrency == nil {
				problems = append(problems, fmt.Sprintf("%s writes %s with no concurrency group: two runs may race", where, strings.Join(repoWrite, ", ")))
			}
		}
		fromBase := []string{}
		for i, s := range job.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "actions/checkout@") && s.with("ref") == "${{ github.base_ref }}" && s.with("path") != "":
				fromBase = append(fromBase, strings.TrimSuffix(s.with("path"), "/")+"/")
			case strings.HasPrefix(s.Uses, "actions/download-artifact@") && s.with("path") != "":
				fromBase = append(fromBase, strings.TrimSuffix(s.with("path"), "/")+"/")
			}
			if strings.Contains(s.Run, "chromium") || strings.Contains(s.Run, "install-deps") {
				if slices.ContainsFunc(job.Steps, workflowStep.usesAction) {
					problems = append(problems, fmt.Sprintf("%s step %d installs a browser (or all the test dependencies) in a gate job", where, i+1))
				}
			}
			if !s.usesAction() || s.with("baseline") == "" || !onPullRequests(w, job) {
				continue
			}
			b := s.with("baseline")
			if strings.HasPrefix(b, "${{ runner.temp }}") || slices.ContainsFunc(fromBase, func(p string) bool { return strings.HasPrefix(b+"/", p) }) {
				continue
			}
			// A branch (main, branch:NAME): the action reads it from that
			// branch's push runs' artifact, never the pull request's tree.
			if strings.HasPrefix(b, "branch:") || !strings.ContainsAny(b, "/.$") {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s step %d: baseline %s comes from the pull request's own tree; read it from a checkout of github.base_ref or an artifact of the base branch", where, i+1, b))
		}
	}
	return problems
}

func TestWorkflowPolicy(t *testing.T) {
	for _, f := range workflowFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range checkWorkflowPolicy(filepath.Base(f), b) {
			t.Error(p)
		}
	}
	for _, w := range docWorkflows(t) {
		for _, p := range checkWorkflowPolicy(w.Name(), w.Content) {
			t.Error(p)
		}
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"chromium", "install-deps"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("action.yml mentions %s: the action installs QEMU for VM runs and nothing else", s)
		}
	}
}

// TestWorkflowPolicyCatches feeds the checks the committed-baseline
// workflow the README used to show.
func TestWorkflowPolicyCatches(t *testing.T) {
	old := []byte(`name: latency gate
on:
  pull_request:
  push:
    branches: [main]
permissions:
  contents: write
  pull-requests: write
jobs:
  gate:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: ./scripts/install-deps.sh
      - uses: tailgate-ci/tailgate@main
        with:
          baseline: .tailgate/baselines
          save-baseline: ${{ github.event_name == 'push' }}
      - run: git push
`)
	got := strings.Join(checkWorkflowPolicy("old.yml", old), "\n")
	for _, want := range []string{
		"old.yml: top-level permissions write contents:",
		"job gate writes contents and runs for pull requests",
		"job gate writes contents with no concurrency group",
		"job gate step 2 installs a browser",
		"job gate step 3: baseline .tailgate/baselines comes from the pull request's own tree",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// TestShardExample: the example gate shards by target, so it never merges
// Results measured on different runners.
func TestShardExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "latency-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w workflowDoc
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	gates := 0
	for name, job := range w.Jobs {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "--shard") || strings.Contains(s.Run, " merge ") {
				t.Errorf("job %s splits or merges a target over jobs: %q", name, s.Run)
			}
			if s.usesAction() {
				gates++
				if s.with("candidate") != "" {
					t.Errorf("job %s gates a Result made elsewhere (%s), not its own target's run", name, s.with("candidate"))
				}
			}
		}
	}
	if gates < 2 {
		t.Errorf("%d gate steps; want one per target kind (host, VM)", gates)
	}
}

// TestReleaseNames: the binaries make release builds are the ones the
// release workflow publishes and the action downloads.
func TestReleaseNames(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RELEASE_PLATFORMS \?= (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no RELEASE_PLATFORMS ?= line")
	}
	action, _ := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	for _, p := range strings.Fields(string(m[1])) {
		asset := "tailgate-" + strings.ReplaceAll(p, "/", "-")
		if !bytes.Contains(action, []byte("asset="+asset+" ")) {
			t.Errorf("make release builds %s; action.yml does not download it", asset)
		}
	}
	rel, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w workflowDoc
	if err := yaml.Unmarshal(rel, &w); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.triggers(), []string{"push"}) || !bytes.Contains(rel, []byte(`tags: ["v[0-9]+.[0-9]+.[0-9]+"]`)) {
		t.Errorf("release.yml: want it run by pushed vX.Y.Z tags, got on: %v", w.On)
	}
	for _, want := range []string{`make release VERSION="$TAG"`, `gh release create "$TAG" dist/*`, `gh release upload "$major" dist/* --clobber`, `git push -f origin "refs/tags/$major"`} {
		if !bytes.Contains(rel, []byte(want)) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
}
