package github_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/rhysd/actionlint"
)

// actionPin is the one version of an action that action.yml, the
// workflows and the README's workflows use: a full commit SHA, with its
// tag in a comment (`uses: actions/checkout@SHA # v7.0.1`), so that a tag
// moved by whoever controls the action's repository changes nothing here.
type actionPin struct {
	SHA, Tag string
	// Node is runs.using of the action.yml at that commit: runners removed
	// Node 20 on 2026-09-16.
	Node string
	// InputsOf is the entry of actionlint's popular-actions data whose
	// inputs are this version's, and Extra the inputs it added since:
	// actionlint knows actions by tag, not by SHA, so the pin is taught
	// to it (registerPins) for its `with:` checks to cover the pinned
	// steps.
	InputsOf string
	Extra    []string
}

// actionPins were read from each action's repository: the commit the tag
// names and runs.using of action.yml there. Moving one is changing this
// table and every `uses:` line with it; TestActionPins finds the lines.
var actionPins = map[string]actionPin{
	"actions/checkout": {SHA: "3d3c42e5aac5ba805825da76410c181273ba90b1", Tag: "v7.0.1", Node: "node24",
		// v7's action.yml is v6.0.0's plus one input.
		InputsOf: "actions/checkout@v6", Extra: []string{"allow-unsafe-pr-checkout"}},
	"actions/setup-go": {SHA: "b7ad1dad31e06c5925ef5d2fc7ad053ef454303e", Tag: "v7.0.0", Node: "node24",
		// v7.0.0's action.yml is v6.5.0's, byte for byte.
		InputsOf: "actions/setup-go@v6"},
	"actions/cache/restore": {SHA: "27d5ce7f107fe9357f9df03efb73ab90386fccae", Tag: "v5.0.5", Node: "node24",
		InputsOf: "actions/cache/restore@v5"},
	"actions/cache/save": {SHA: "27d5ce7f107fe9357f9df03efb73ab90386fccae", Tag: "v5.0.5", Node: "node24",
		InputsOf: "actions/cache/save@v5"},
	"actions/upload-artifact": {SHA: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", Tag: "v7.0.0", Node: "node24",
		InputsOf: "actions/upload-artifact@v7"},
	"actions/download-artifact": {SHA: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", Tag: "v8.0.1", Node: "node24",
		InputsOf: "actions/download-artifact@v8"},
	"actions/github-script": {SHA: "ed597411d8f924073f98dfc5c65a23a2325f34cd", Tag: "v8.0.0", Node: "node24",
		InputsOf: "actions/github-script@v8"},
}

var registerPinsOnce sync.Once

// registerPins adds each pin, as ACTION@SHA, to actionlint's data of
// popular actions, with the inputs of its version.
func registerPins(t *testing.T) {
	t.Helper()
	registerPinsOnce.Do(func() {
		for action, p := range actionPins {
			known, ok := actionlint.PopularActions[p.InputsOf]
			if !ok {
				panic(fmt.Sprintf("pin of %s: actionlint knows no %s", action, p.InputsOf))
			}
			meta := *known
			meta.Inputs = actionlint.ActionMetadataInputs{}
			for k, in := range known.Inputs {
				meta.Inputs[k] = in
			}
			for _, name := range p.Extra {
				meta.Inputs[name] = &actionlint.ActionMetadataInput{Name: name}
			}
			actionlint.PopularActions[action+"@"+p.SHA] = &meta
		}
	})
}

var usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(.*)$`)

// checkPins returns a line for each `uses:` of content that is not this
// repository's action and not pinned as actionPins says. line0 is the
// line of content's first line in its file.
func checkPins(name string, line0 int, content []byte) []string {
	var problems []string
	for i, line := range strings.Split(string(content), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		m := usesLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		uses, comment := m[1], strings.TrimSpace(m[2])
		where := fmt.Sprintf("%s:%d", name, line0+i)
		if uses == "./" || strings.HasPrefix(uses, "tailgate-ci/tailgate@") {
			continue
		}
		action, ref, _ := strings.Cut(uses, "@")
		p, ok := actionPins[action]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s is not in actionPins: look up the tag's commit and its runs.using, and add it", where, action))
			continue
		}
		if want := p.SHA; ref != want || comment != "# "+p.Tag {
			problems = append(problems, fmt.Sprintf("%s: uses: %s %s; want uses: %s@%s # %s", where, uses, comment, action, p.SHA, p.Tag))
		}
	}
	return problems
}

// TestActionPins: every action used by action.yml, the workflows and the
// README's workflows is pinned by commit, at a version that runs on Node
// 24, and the same one everywhere.
func TestActionPins(t *testing.T) {
	for action, p := range actionPins {
		if p.Node != "node24" {
			t.Errorf("%s %s runs on %s: runners have only Node 24", action, p.Tag, p.Node)
		}
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(p.SHA) {
			t.Errorf("%s: %q is not a full commit SHA", action, p.SHA)
		}
	}
	files := append([]string{filepath.Join(repoRoot, "action.yml")}, workflowFiles(t)...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range checkPins(filepath.Base(f), 1, b) {
			t.Error(p)
		}
	}
	for _, w := range docWorkflows(t) {
		for _, p := range checkPins(w.File, w.Line, w.Content) {
			t.Error(p)
		}
	}
	got := checkPins("bad.yml", 1, []byte("    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e # v6\n      - uses: some/action@v1\n"))
	if len(got) != 3 || !strings.Contains(got[0], "bad.yml:2: uses: actions/checkout@v4") || !strings.Contains(got[2], "some/action is not in actionPins") {
		t.Errorf("checkPins: %q", got)
	}
}

// hostPathContexts expand to the runner host's paths, also in a
// container job, whose steps see the work directory elsewhere (/__w for
// /home/runner/work): actions/runner#2185, #2058.
var hostPathContexts = regexp.MustCompile(`\$\{\{[^}]*\b(github\.action_path|runner\.temp|github\.workspace|runner\.workspace|runner\.tool_cache)\b`)

// TestNoHostPaths: action.yml takes no path from those contexts, for a
// container job runs its steps, and the actions they use, in the
// container; the workflows' and the README's container jobs put none
// into a script or its environment ($RUNNER_TEMP, $GITHUB_WORKSPACE and
// $GITHUB_ACTION_PATH are the container's).
func TestNoHostPaths(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(raw), "\n") {
		if m := hostPathContexts.FindStringSubmatch(line); m != nil {
			t.Errorf("action.yml:%d: %s is the host's path in a container job; use the environment ($GITHUB_ACTION_PATH, $RUNNER_TEMP), or a step's output of it in with:", i+1, m[1])
		}
	}
	check := func(name string, content []byte) {
		var w struct {
			Jobs map[string]struct {
				Container any `yaml:"container"`
				Steps     []struct {
					Name string            `yaml:"name"`
					Run  string            `yaml:"run"`
					Env  map[string]string `yaml:"env"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(content, &w); err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		for j, job := range w.Jobs {
			if job.Container == nil {
				continue
			}
			for i, s := range job.Steps {
				texts := []string{s.Run}
				for _, v := range s.Env {
					texts = append(texts, v)
				}
				for _, text := range texts {
					if m := hostPathContexts.FindStringSubmatch(text); m != nil {
						t.Errorf("%s: container job %s step %d (%s): %s is the host's path there; use the environment", name, j, i+1, s.Name, m[1])
					}
				}
			}
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
	}
}
