package github_test

// A small stand-in for the Actions runner, enough to run action.yml's
// composite steps here: inputs with their defaults, `if:` conditions,
// ${{ }} substitution in run scripts, env and with, GITHUB_OUTPUT per step,
// a shared GITHUB_STEP_SUMMARY, and bash as `shell: bash` runs it. `uses:`
// steps are recorded (with their `with:` evaluated), not run, except
// actions/cache/restore and actions/cache/save given a cacheStore.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"
)

type actionFile struct {
	Name        string                  `yaml:"name"`
	Description string                  `yaml:"description"`
	Author      string                  `yaml:"author"`
	Branding    map[string]string       `yaml:"branding"`
	Inputs      map[string]actionInput  `yaml:"inputs"`
	Outputs     map[string]actionOutput `yaml:"outputs"`
	Runs        struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

type actionOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

func loadAction(t *testing.T, path string) *actionFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.UnmarshalWithOptions(b, &a, yaml.Strict()); err != nil {
		// Strict catches keys this runner would silently ignore.
		t.Fatalf("%s: %v", path, err)
	}
	return &a
}

// usedStep is a `uses:` step as the runner would have called it.
type usedStep struct {
	Name, Uses string
	With       map[string]string
	Ran        bool // its condition held
}

// stepRun is what one run step did.
type stepRun struct {
	Name    string
	Outcome string // success, failure or skipped
	Code    int
	Log     string
}

// actionRun is one run of the action.
type actionRun struct {
	Steps   []stepRun
	Uses    []usedStep
	Outputs map[string]string
	Failed  bool
	Summary string
	Log     string
}

// step returns the run of the step named name.
func (r *actionRun) step(t *testing.T, name string) stepRun {
	t.Helper()
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q ran or was skipped", name)
	return stepRun{}
}

// runner holds the contexts a run evaluates expressions in.
type runner struct {
	t       *testing.T
	action  *actionFile
	inputs  map[string]string
	github  map[string]string
	env     []string
	steps   map[string]map[string]string // id → outputs
	known   map[string]bool              // every step id of the action
	failed  bool
	summary string
	tmp     string
	cache   *cacheStore
	// hostTemp, when set, is what runner.temp expands to: the host's
	// path, in a container job (see inContainer).
	hostTemp string
}

// runOption changes how a run is made.
type runOption func(*runner)

// inContainer runs the steps as a container job's: runner.temp expands
// to hostTemp, the runner host's path, as github.action_path and
// github.workspace do to theirs (the github context given), while the
// environment holds the container's paths (actions/runner#2185, #2058).
func inContainer(hostTemp string) runOption { return func(r *runner) { r.hostTemp = hostTemp } }

// withCache serves actions/cache/restore and actions/cache/save from c.
func withCache(c *cacheStore) runOption { return func(r *runner) { r.cache = c } }

// cacheStore stands in for the Actions cache: each saved key holds a copy
// of the saved path, and keys are never overwritten.
type cacheStore struct {
	t     *testing.T
	dir   string
	Saved []string // keys, in the order saved
}

func newCacheStore(t *testing.T) *cacheStore { return &cacheStore{t: t, dir: t.TempDir()} }

func (c *cacheStore) entry(key string) string { return filepath.Join(c.dir, strconv.Quote(key)) }

// restore copies the entry of key, else of the newest key starting with a
// restore-keys prefix, to path, and returns the step's outputs.
func (c *cacheStore) restore(with map[string]string) map[string]string {
	path, key := with["path"], with["key"]
	if path == "" || key == "" {
		c.t.Fatalf("actions/cache/restore: path %q, key %q: both are required", path, key)
	}
	matched := ""
	if _, err := os.Stat(c.entry(key)); err == nil {
		matched = key
	} else {
		for _, prefix := range strings.Fields(with["restore-keys"]) {
			for i := len(c.Saved) - 1; i >= 0 && matched == ""; i-- {
				if strings.HasPrefix(c.Saved[i], prefix) {
					matched = c.Saved[i]
				}
			}
		}
	}
	out := map[string]string{"cache-hit": "false", "cache-primary-key": key, "cache-matched-key": matched}
	if matched == "" {
		return out
	}
	copyTree(c.t, c.entry(matched), path)
	out["cache-hit"] = strconv.FormatBool(matched == key)
	return out
}

// save stores path under key; an existing key stays as it was, as in
// Actions.
func (c *cacheStore) save(with map[string]string) {
	path, key := with["path"], with["key"]
	if _, err := os.Stat(c.entry(key)); err == nil {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return // actions/cache/save warns and saves nothing
	}
	copyTree(c.t, path, c.entry(key))
	c.Saved = append(c.Saved, key)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v: %s", from, to, err, out)
	}
}

// runAction runs every step of a.
func runAction(t *testing.T, a *actionFile, with map[string]string, gh map[string]string, env []string, opts ...runOption) *actionRun {
	t.Helper()
	r := newRunner(t, a, with, gh, env)
	for _, o := range opts {
		o(r)
	}
	out := &actionRun{Outputs: map[string]string{}}
	for _, s := range a.Runs.Steps {
		r.runStep(s, out)
	}
	for name, o := range a.Outputs {
		out.Outputs[name] = r.interpolate(o.Value)
	}
	out.Failed = r.failed
	b, _ := os.ReadFile(r.summary)
	out.Summary = string(b)
	var log strings.Builder
	for _, s := range out.Steps {
		fmt.Fprintf(&log, "--- %s (%s, exit %d)\n%s", s.Name, s.Outcome, s.Code, s.Log)
	}
	out.Log = log.String()
	return out
}

func newRunner(t *testing.T, a *actionFile, with map[string]string, gh map[string]string, env []string) *runner {
	t.Helper()
	tmp := t.TempDir()
	r := &runner{t: t, action: a, github: gh, steps: map[string]map[string]string{}, known: map[string]bool{}, tmp: tmp,
		summary: filepath.Join(tmp, "step_summary.md")}
	for _, s := range a.Runs.Steps {
		if s.ID != "" {
			r.known[s.ID] = true
		}
	}
	for k := range with {
		if _, ok := a.Inputs[k]; !ok {
			t.Fatalf("with: %s is not an input of the action", k)
		}
	}
	r.inputs = map[string]string{}
	for name, in := range a.Inputs {
		v, ok := with[name]
		if !ok {
			if in.Required {
				t.Fatalf("input %s is required", name)
			}
			v = r.interpolate(in.Default)
		}
		r.inputs[name] = v
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") {
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env, "CI=true", "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+r.summary)
	r.env = append(r.env, env...)
	return r
}

func (r *runner) runStep(s actionStep, out *actionRun) {
	t := r.t
	t.Helper()
	name := s.Name
	if name == "" {
		name = s.ID
	}
	cond := strings.TrimSpace(s.If)
	if cond == "" {
		cond = "success()"
	}
	cond = strings.TrimSuffix(strings.TrimPrefix(cond, "${{"), "}}")
	ok := truthy(r.eval(cond))
	if s.Uses != "" {
		u := usedStep{Name: name, Uses: s.Uses, With: map[string]string{}, Ran: ok}
		for k, v := range s.With {
			u.With[k] = r.interpolate(v)
		}
		out.Uses = append(out.Uses, u)
		if ok && r.cache != nil {
			switch action, _, _ := strings.Cut(s.Uses, "@"); action {
			case "actions/cache/restore":
				r.steps[s.ID] = r.cache.restore(u.With)
			case "actions/cache/save":
				r.cache.save(u.With)
			case "actions/cache":
				t.Fatalf("step %q: actions/cache saves only when the job succeeds; use actions/cache/restore and /save", name)
			}
		}
		return
	}
	if !ok {
		out.Steps = append(out.Steps, stepRun{Name: name, Outcome: "skipped"})
		return
	}
	if s.Shell != "bash" {
		t.Fatalf("step %q: shell %q; composite run steps here use bash", name, s.Shell)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(script, []byte(r.interpolate(s.Run)), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "output")
	os.WriteFile(outFile, nil, 0o644)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = r.github["workspace"] // where composite run steps start
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "GITHUB_WORKSPACE="); ok {
			cmd.Dir = v // the container's, in a container job
		}
	}
	cmd.Env = append(append([]string(nil), r.env...), "GITHUB_OUTPUT="+outFile)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+r.interpolate(v))
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	run := stepRun{Name: name, Outcome: "success", Log: log.String()}
	if err != nil {
		ee, isExit := err.(*exec.ExitError)
		if !isExit {
			t.Fatalf("step %q: %v", name, err)
		}
		run.Outcome, run.Code = "failure", ee.ExitCode()
		r.failed = true
	}
	out.Steps = append(out.Steps, run)
	if s.ID != "" {
		r.steps[s.ID] = parseOutputs(t, outFile)
	}
}

// parseOutputs reads a GITHUB_OUTPUT file: name=value lines and
// name<<DELIM heredocs.
func parseOutputs(t *testing.T, path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			outs[k] = strings.Join(val, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is neither name=value nor name<<DELIM", line)
		}
		outs[k] = v
	}
	return outs
}

// interpolate replaces every ${{ expr }} in s.
func (r *runner) interpolate(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			r.t.Fatalf("unclosed ${{ in %q", s)
		}
		b.WriteString(s[:i])
		b.WriteString(str(r.eval(s[i+3 : i+j])))
		s = s[i+j+2:]
	}
}

// eval evaluates an expression of the Actions language: literals, context
// properties, !, ==, !=, &&, || (yielding operands, as Actions does),
// parentheses and the status functions.
func (r *runner) eval(expr string) any {
	p := &exprParser{r: r, toks: lex(r.t, expr), src: expr}
	v := p.or()
	if p.pos != len(p.toks) {
		r.t.Fatalf("expression %q: unexpected %q", expr, p.toks[p.pos])
	}
	return v
}

type exprParser struct {
	r    *runner
	toks []string
	pos  int
	src  string
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) next() string { s := p.peek(); p.pos++; return s }

func (p *exprParser) or() any {
	v := p.and()
	for p.peek() == "||" {
		p.next()
		w := p.and()
		if !truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.cmp()
	for p.peek() == "&&" {
		p.next()
		w := p.cmp()
		if truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) cmp() any {
	v := p.unary()
	switch op := p.peek(); op {
	case "==", "!=":
		p.next()
		eq := looseEqual(v, p.unary())
		return eq == (op == "==")
	}
	return v
}

func (p *exprParser) unary() any {
	if p.peek() == "!" {
		p.next()
		return !truthy(p.unary())
	}
	return p.primary()
}

func (p *exprParser) primary() any {
	t := p.r.t
	tok := p.next()
	switch {
	case tok == "(":
		v := p.or()
		if p.next() != ")" {
			t.Fatalf("expression %q: missing )", p.src)
		}
		return v
	case strings.HasPrefix(tok, "'"):
		return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
	case tok == "true", tok == "false":
		return tok == "true"
	case tok == "null":
		return nil
	case tok != "" && (tok[0] >= '0' && tok[0] <= '9'):
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			t.Fatalf("expression %q: number %q", p.src, tok)
		}
		return f
	}
	if p.peek() == "(" {
		p.next()
		if p.next() != ")" {
			t.Fatalf("expression %q: %s() takes no arguments here", p.src, tok)
		}
		switch tok {
		case "always":
			return true
		case "success":
			return !p.r.failed
		case "failure":
			return p.r.failed
		case "cancelled":
			return false
		}
		t.Fatalf("expression %q: function %s is not supported by this runner", p.src, tok)
	}
	return p.r.lookup(tok)
}

// lookup resolves a dotted context path. A typo is a test failure, not an
// empty string.
func (r *runner) lookup(path string) any {
	t := r.t
	parts := strings.Split(path, ".")
	switch parts[0] {
	case "inputs":
		v, ok := r.inputs[parts[1]]
		if len(parts) != 2 || !ok {
			t.Fatalf("%s: no such input", path)
		}
		return v
	case "github":
		v, ok := r.github[strings.Join(parts[1:], ".")]
		if !ok {
			t.Fatalf("%s: not in this runner's github context", path)
		}
		return v
	case "steps":
		if len(parts) != 4 || parts[2] != "outputs" || !r.known[parts[1]] {
			t.Fatalf("%s: want steps.<id of a step>.outputs.<name>", path)
		}
		return r.steps[parts[1]][parts[3]] // "" when unset or not run, as in Actions
	case "runner":
		if path == "runner.temp" {
			if r.hostTemp != "" {
				return r.hostTemp
			}
			// The RUNNER_TEMP of the job, as on a runner.
			for _, kv := range r.env {
				if v, ok := strings.CutPrefix(kv, "RUNNER_TEMP="); ok {
					return v
				}
			}
			return r.tmp
		}
	}
	t.Fatalf("%s: context not supported by this runner", path)
	return nil
}

func lex(t *testing.T, s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "&&"), strings.HasPrefix(s[i:], "||"), strings.HasPrefix(s[i:], "=="), strings.HasPrefix(s[i:], "!="):
			toks = append(toks, s[i:i+2])
			i += 2
		case c == '!' || c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '\'':
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(s) {
				t.Fatalf("expression %q: unterminated string", s)
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || strings.IndexByte("_-.", s[j]) >= 0) {
				j++
			}
			if j == i {
				t.Fatalf("expression %q: unexpected %q", s, c)
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return true
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// looseEqual is Actions' ==: strings compare case-insensitively, other
// mixes as numbers (null and ” are 0).
func looseEqual(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	num := func(v any) float64 {
		switch v := v.(type) {
		case nil:
			return 0
		case bool:
			if v {
				return 1
			}
			return 0
		case float64:
			return v
		case string:
			if strings.TrimSpace(v) == "" {
				return 0
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return -1e308 // NaN in Actions: equal to nothing
			}
			return f
		}
		return 0
	}
	return num(a) == num(b)
}
