package github_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/github"
	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// repoRoot is where action.yml and .github live, seen from this package.
var repoRoot = func() string {
	p, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return p
}()

// syntheticResult is a Result of scenario syscall-read whose five trials
// of syscall.read are lognormal around 20µs times scale.
func syntheticResult(t *testing.T, path string, scale float64, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	m := &result.Metric{Unit: "ns"}
	for range 5 {
		h := hist.New()
		for range 20000 {
			h.Record(uint64(20000 * scale * math.Exp(0.5*r.NormFloat64())))
		}
		m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h)})
	}
	res := &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(int64(seed), 0),
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0-test", CPUModel: "test cpu", CPUs: 2},
		Scenarios: []result.Scenario{{
			Name: "syscall-read", Params: "params-1", Trials: 5,
			Metrics: map[string]*result.Metric{"syscall.read": m},
		}},
	}
	if err := result.Write(path, res); err != nil {
		t.Fatal(err)
	}
	return path
}

// actionEnv is the github context and environment of a pull-request job
// whose API is srv.
func actionEnv(t *testing.T, srv *githubtest.Server, pr int) (map[string]string, []string) {
	t.Helper()
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"action":"synchronize","pull_request":{"number":`+strconv.Itoa(pr)+`}}`), 0o644)
	temp := filepath.Join(dir, "runner-temp")
	os.MkdirAll(temp, 0o755)
	gh := map[string]string{
		"action_path": repoRoot,
		"event_name":  "pull_request",
		"repository":  srv.Repo,
		"server_url":  "https://github.example",
		"run_id":      "4242",
		"token":       srv.Token,
		"workspace":   dir,
	}
	env := []string{
		"GITHUB_ACTION_PATH=" + repoRoot,
		"GITHUB_EVENT_NAME=pull_request",
		"GITHUB_EVENT_PATH=" + event,
		"GITHUB_REPOSITORY=" + srv.Repo,
		"GITHUB_SERVER_URL=https://github.example",
		"GITHUB_API_URL=" + srv.URL,
		"GITHUB_RUN_ID=4242",
		"GITHUB_WORKSPACE=" + dir,
		"RUNNER_TEMP=" + temp,
	}
	return gh, env
}

func TestActionSteps(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("needs bash")
	}
	a := loadAction(t, filepath.Join(repoRoot, "action.yml"))
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	dir := t.TempDir()
	base := syntheticResult(t, filepath.Join(dir, "base.json"), 1, 1)
	slow := syntheticResult(t, filepath.Join(dir, "slow.json"), 1.4, 2)
	steady := syntheticResult(t, filepath.Join(dir, "steady.json"), 1, 3)
	srv := githubtest.New(t, "octo/kernel", "ghs_test")
	srv.Seed(9, "please look at the p99", "ack")

	with := map[string]string{"candidate": slow, "baseline": base, "comment": "true", "github-token": "ghs_test"}
	var bin string
	t.Run("regression", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		run := runAction(t, a, with, gh, env)
		if !run.Failed || run.step(t, "Outcome").Code != 1 || run.Outputs["exit-code"] != "1" {
			t.Fatalf("want the action to fail with exit 1; outputs %v\n%s", run.Outputs, run.Log)
		}
		for _, s := range run.Steps {
			if s.Name != "Outcome" && s.Outcome != "success" && s.Name != "Enable KVM" {
				t.Errorf("step %q: %s", s.Name, s.Outcome)
			}
		}
		if s := run.step(t, "Enable KVM"); s.Outcome != "skipped" {
			t.Errorf("KVM step ran for a pre-made Result")
		}
		first, _, _ := strings.Cut(run.Summary, "\n")
		if !strings.HasSuffix(first, "regression in 1 gated percentile.") || !strings.Contains(run.Summary, "actions/runs/4242") {
			t.Errorf("summary:\n%s", run.Summary)
		}
		if !strings.Contains(run.Log, "::error title=tailgate%3A syscall-read syscall.read p99 regression::syscall-read syscall.read p99:") {
			t.Errorf("no ::error annotation naming syscall.read p99:\n%s", run.Log)
		}
		cs := srv.Comments(9)
		if len(cs) != 3 || !strings.HasPrefix(cs[2].Body, github.DefaultMarker) || !strings.Contains(cs[2].Body, first) {
			t.Errorf("comments: %+v", cs)
		}
		setup, upload := usesStep(t, run, "actions/setup-go@"), usesStep(t, run, "actions/upload-artifact@")
		if !setup.Ran || setup.With["go-version-file"] != filepath.Join(repoRoot, "go.mod") {
			t.Errorf("setup-go: %+v", setup)
		}
		if !upload.Ran || !strings.Contains(upload.With["path"], slow) || upload.With["name"] != "tailgate-result" {
			t.Errorf("upload-artifact: %+v", upload)
		}
		for _, p := range strings.Fields(upload.With["path"]) {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("artifact path %s matches no file", p)
			}
		}
		// Kept for the later runs, past this subtest's temporary files.
		b, err := os.ReadFile(filepath.Join(runnerTemp(env), "tailgate", "tailgate"))
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "tailgate")
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	})
	if bin == "" {
		t.FailNow()
	}

	t.Run("second push updates the comment", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := clone(with)
		w["tailgate"] = bin // an installed tailgate: nothing is built
		run := runAction(t, a, w, gh, env)
		if run.step(t, "Outcome").Code != 1 || strings.Contains(run.Log, "building tailgate") {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if usesStep(t, run, "actions/setup-go@").Ran {
			t.Error("setup-go ran with an installed tailgate")
		}
		if cs := srv.Comments(9); len(cs) != 3 {
			t.Errorf("%d comments, want the same 3: %+v", len(cs), cs)
		}
		if !slices.ContainsFunc(srv.Requests(), func(r string) bool { return strings.HasPrefix(r, "PATCH /repos/octo/kernel/issues/comments/") }) {
			t.Errorf("no PATCH: %v", srv.Requests())
		}
	})

	t.Run("pass", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := clone(with)
		w["tailgate"], w["candidate"] = bin, steady
		run := runAction(t, a, w, gh, env)
		if run.Failed || run.Outputs["exit-code"] != "0" || !strings.HasPrefix(run.Summary, "No regressions in 1 gated percentile") {
			t.Fatalf("outputs %v\nsummary:\n%s\n%s", run.Outputs, run.Summary, run.Log)
		}
		if strings.Contains(run.Log, "::error") {
			t.Errorf("annotations on a pass:\n%s", run.Log)
		}
		if cs := srv.Comments(9); len(cs) != 3 || !strings.Contains(cs[2].Body, "No regressions") {
			t.Errorf("comments: %+v", cs)
		}
	})

	t.Run("bad input: exit 2 carried, summary says why", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := clone(with)
		w["tailgate"], w["baseline"], w["comment"] = bin, filepath.Join(dir, "missing-dir"), "false"
		run := runAction(t, a, w, gh, env)
		if run.step(t, "Outcome").Code != 2 || run.step(t, "Pull-request comment").Outcome != "skipped" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if !strings.HasPrefix(run.Summary, "tailgate gate failed: bad usage or input (exit 2).") || !strings.Contains(run.Summary, "no baseline for syscall-read") {
			t.Errorf("summary:\n%s", run.Summary)
		}
	})

	t.Run("not a pull request: no comment", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		gh["event_name"] = "push"
		w := clone(with)
		w["tailgate"] = bin
		before := len(srv.Requests())
		run := runAction(t, a, w, gh, env)
		if run.step(t, "Pull-request comment").Outcome != "skipped" || len(srv.Requests()) != before {
			t.Errorf("commented on a push:\n%s", run.Log)
		}
	})

	t.Run("kernel: run in the VM, then gate the Result", func(t *testing.T) {
		// A stand-in tailgate: "run" logs its arguments and writes the slow
		// Result where -o says; "gate" is the real one.
		fake, log := fakeSudo(t)
		wrapper := filepath.Join(fake, "tailgate")
		os.WriteFile(wrapper, []byte(`#!/bin/bash
echo "$*" >> `+log+`
if [ "$1" = run ]; then
  while [ $# -gt 0 ]; do [ "$1" != -o ] || cp `+slow+` "$2"; shift; done
  exit 0
fi
exec `+bin+` "$@"
`), 0o755)
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "PATH="+fake+":"+os.Getenv("PATH"))
		w := clone(with)
		w["tailgate"], w["candidate"], w["comment"] = wrapper, "", "false"
		w["kernel"], w["scenarios"], w["trials"], w["thresholds"] = "debian:6.1-cloud", "syscall-read\npipe-pingpong", "2", "p99=10%\np50=off"
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "1" || run.step(t, "Enable KVM").Outcome != "success" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		calls := strings.Split(strings.TrimSpace(mustRead(t, log)), "\n")
		var tg []string
		for _, c := range calls {
			if strings.HasPrefix(c, "run ") || strings.HasPrefix(c, "gate ") {
				tg = append(tg, c)
			}
		}
		result := filepath.Join(runnerTemp(env), "tailgate", "result.json")
		if len(tg) != 2 ||
			tg[0] != "run syscall-read pipe-pingpong --kernel debian:6.1-cloud --trials 2 -o "+result ||
			!strings.HasPrefix(tg[1], "gate --baseline "+base+" --format github") ||
			!strings.HasSuffix(tg[1], "--candidate "+result+" --threshold p99=10% --threshold p50=off") {
			t.Errorf("tailgate calls:\n%s", strings.Join(tg, "\n"))
		}
		if slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "sudo -E") }) {
			t.Errorf("a VM run went through sudo:\n%s", strings.Join(calls, "\n"))
		}
		if up := usesStep(t, run, "actions/upload-artifact@"); !strings.Contains(up.With["path"], result) {
			t.Errorf("artifact path %q lacks the VM run's Result", up.With["path"])
		}
	})

	t.Run("base and head in one job", func(t *testing.T) {
		// A stand-in tailgate: logs its arguments, writes each target's
		// Result where -o says and names them as the real one does.
		fake, log := fakeSudo(t)
		wrapper := filepath.Join(fake, "tailgate")
		os.WriteFile(wrapper, []byte(`#!/bin/bash
echo "$*" >> `+log+`
out=""; fmt=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    --format) case "$2" in markdown=*) fmt="${2#markdown=}" ;; esac; shift ;;
  esac
  shift
done
cp `+steady+` "${out%.json}-base.json"; echo "result of base written to ${out%.json}-base.json" >&2
cp `+slow+` "${out%.json}-tuned.json"; echo "result of tuned written to ${out%.json}-tuned.json" >&2
echo "1 regression in 1 gated percentile." > "$fmt"
exit 1
`), 0o755)
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "PATH="+fake+":"+os.Getenv("PATH"))
		w := map[string]string{"tailgate": wrapper, "scenarios": "timer-1ms", "base-variant": "base", "head-variant": "tuned:kernel.timer_migration=0", "budget": "5m", "enable-kvm": "false"}
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "1" || !run.Failed {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		dir := filepath.Join(runnerTemp(env), "tailgate")
		calls := mustRead(t, log)
		want := "gate --format github --format markdown=" + dir + "/report.md --format json=" + dir + "/report.json --format text=" + dir + "/report.txt " +
			"timer-1ms --variant base --variant tuned:kernel.timer_migration=0 -o " + dir + "/result.json --budget 5m"
		if !strings.Contains(calls, want) {
			t.Errorf("tailgate calls:\n%s\nwant:\n%s", calls, want)
		}
		if os.Getuid() != 0 && !strings.Contains(calls, "sudo -E") {
			t.Errorf("a host variant did not run through sudo:\n%s", calls)
		}
		if run.Outputs["result"] != dir+"/result-tuned.json" || !strings.Contains(run.Outputs["results"], dir+"/result-base.json") {
			t.Errorf("outputs %v: want the head's Result as result, both in results", run.Outputs)
		}
		for _, p := range strings.Fields(usesStep(t, run, "actions/upload-artifact@").With["path"]) {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("artifact path %s matches no file", p)
			}
		}
	})

	t.Run("base without head, or with a baseline: exit 2", func(t *testing.T) {
		for _, w := range []map[string]string{
			{"tailgate": bin, "base-kernel": "debian:6.1-cloud", "enable-kvm": "false"},
			{"tailgate": bin, "base-variant": "a", "head-variant": "b", "baseline": "x", "enable-kvm": "false"},
			{"tailgate": bin, "enable-kvm": "false"},
		} {
			gh, env := actionEnv(t, srv, 9)
			run := runAction(t, a, w, gh, env)
			if run.Outputs["exit-code"] != "2" || !strings.Contains(run.Log, "::error title=tailgate::") {
				t.Errorf("%v: outputs %v\n%s", w, run.Outputs, run.Log)
			}
		}
	})

	t.Run("KVM", func(t *testing.T) {
		fake, log := fakeSudo(t)
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "PATH="+fake+":"+os.Getenv("PATH"))
		w := clone(with)
		w["tailgate"], w["candidate"] = bin, ""
		r := newRunner(t, a, w, gh, env)
		out := &actionRun{}
		for _, s := range a.Runs.Steps {
			if s.ID == "kvm" {
				r.runStep(s, out)
			}
		}
		if len(out.Steps) != 1 || out.Steps[0].Outcome != "success" {
			t.Fatalf("%+v", out.Steps)
		}
		calls, _ := os.ReadFile(log)
		if _, err := os.Stat("/dev/kvm"); err == nil {
			for _, want := range []string{"sudo tee /etc/udev/rules.d/", `KERNEL=="kvm", GROUP="kvm", MODE="0666"`, "udevadm trigger --name-match=kvm"} {
				if !strings.Contains(string(calls), want) {
					t.Errorf("KVM setup lacks %q:\n%s", want, calls)
				}
			}
		} else if !strings.Contains(out.Steps[0].Log, "::notice title=tailgate::no /dev/kvm") || len(calls) != 0 {
			t.Errorf("no /dev/kvm: want a notice and no sudo:\n%s\n%s", out.Steps[0].Log, calls)
		}
	})
}

// fakeSudo makes stand-ins for sudo and udevadm that log their arguments
// (and what sudo tee is fed), so the KVM step runs without touching /etc.
func fakeSudo(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "calls.log")
	for _, name := range []string{"sudo", "udevadm"} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + log + "\n[ \"$1\" != tee ] || cat >> " + log + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, log
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func runnerTemp(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "RUNNER_TEMP="); ok {
			return v
		}
	}
	return ""
}

func usesStep(t *testing.T, run *actionRun, prefix string) usedStep {
	t.Helper()
	for _, u := range run.Uses {
		if strings.HasPrefix(u.Uses, prefix) {
			return u
		}
	}
	t.Fatalf("the action has no %s step", prefix)
	return usedStep{}
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
