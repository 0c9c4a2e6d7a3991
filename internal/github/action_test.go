package github_test

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/github"
	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
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
// whose API is srv, using the action as `uses: ./` (no ref).
func actionEnv(t *testing.T, srv *githubtest.Server, pr int) (map[string]string, []string) {
	t.Helper()
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"action":"synchronize","pull_request":{"number":`+strconv.Itoa(pr)+`}}`), 0o644)
	temp := filepath.Join(dir, "runner-temp")
	os.MkdirAll(temp, 0o755)
	gh := map[string]string{
		"action_path":       repoRoot,
		"action_ref":        "",
		"action_repository": "",
		"event_name":        "pull_request",
		"repository":        srv.Repo,
		"server_url":        srv.URL,
		"run_id":            "4242",
		"token":             srv.Token,
		"workspace":         dir,
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
		"RUNNER_OS=Linux",
		"RUNNER_ARCH=X64",
	}
	return gh, env
}

func TestActionSteps(t *testing.T) {
	testenv.Need(t, testenv.Feature{Name: "/bin/bash", Use: func() error { _, err := os.Stat("/bin/bash"); return err }, Required: true})
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
	cache := newCacheStore(t)

	with := map[string]string{"candidate": slow, "baseline": base, "comment": "true", "github-token": "ghs_test"}
	var bin string
	t.Run("regression", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		run := runAction(t, a, with, gh, env, withCache(cache))
		if !run.Failed || run.step(t, "Outcome").Code != 1 || run.Outputs["exit-code"] != "1" {
			t.Fatalf("want the action to fail with exit 1; outputs %v\n%s", run.Outputs, run.Log)
		}
		for _, s := range run.Steps {
			switch s.Name {
			case "Outcome":
			case "Enable KVM", "Install QEMU":
				if s.Outcome != "skipped" {
					t.Errorf("step %q ran for a pre-made Result", s.Name)
				}
			case "Fetch the history", "Add the Result to the history", "Make the history page":
				if s.Outcome != "skipped" {
					t.Errorf("step %q ran without history: true", s.Name)
				}
			case "Find the stored baseline":
				if s.Outcome != "skipped" {
					t.Errorf("step %q ran with a baseline file", s.Name)
				}
			default:
				if s.Outcome != "success" {
					t.Errorf("step %q: %s", s.Name, s.Outcome)
				}
			}
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
		// Built from source (no tag), with Go, and the build cached at once.
		build := run.step(t, "Build tailgate")
		if !strings.Contains(build.Log, "building tailgate from "+repoRoot) || !strings.Contains(build.Log, "tailgate dev (commit ") {
			t.Errorf("Build tailgate:\n%s", build.Log)
		}
		setup, upload := usesStep(t, run, "actions/setup-go@"), usesStepNamed(t, run, "Upload the Result")
		if !setup.Ran || setup.With["go-version-file"] != filepath.Join(repoRoot, "go.mod") {
			t.Errorf("setup-go: %+v", setup)
		}
		restore, save := usesStep(t, run, "actions/cache/restore@"), usesStep(t, run, "actions/cache/save@")
		key := restore.With["key"]
		if !restore.Ran || !save.Ran || !strings.HasPrefix(key, "tailgate-build-Linux-X64-") || save.With["key"] != key ||
			restore.With["path"] != filepath.Join(runnerTemp(env), "tailgate-build") || !slices.Equal(cache.Saved, []string{key}) {
			t.Errorf("build cache: restore %+v, save %+v, saved %v", restore, save, cache.Saved)
		}
		if !upload.Ran || !strings.Contains(upload.With["path"], slow) || upload.With["name"] != "tailgate-result" {
			t.Errorf("upload-artifact: %+v", upload)
		}
		for _, p := range strings.Fields(upload.With["path"]) {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("artifact path %s matches no file", p)
			}
		}
		built := filepath.Join(runnerTemp(env), "tailgate-build", "tailgate")
		if run.Outputs["tailgate"] != built {
			t.Errorf("output tailgate %q, want %s", run.Outputs["tailgate"], built)
		}
		// Kept for the later runs, past this subtest's temporary files.
		b, err := os.ReadFile(built)
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
	binBytes, _ := os.ReadFile(bin)

	t.Run("the build comes from the cache: no Go, no build", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		run := runAction(t, a, with, gh, env, withCache(cache))
		if run.Outputs["exit-code"] != "1" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if usesStep(t, run, "actions/setup-go@").Ran || usesStep(t, run, "actions/cache/save@").Ran || strings.Contains(run.Log, "building tailgate") {
			t.Errorf("built again, or set up Go, with the build in the cache:\n%s", run.Log)
		}
		if l := run.step(t, "Build tailgate").Log; !strings.Contains(l, "using the cached build of the action's source: tailgate dev") {
			t.Errorf("Build tailgate:\n%s", l)
		}
	})

	t.Run("second push updates the comment", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := clone(with)
		w["tailgate"] = bin // an installed tailgate: nothing is built
		run := runAction(t, a, w, gh, env)
		if run.step(t, "Outcome").Code != 1 || strings.Contains(run.Log, "building tailgate") {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if usesStep(t, run, "actions/setup-go@").Ran || usesStep(t, run, "actions/cache/restore@").Ran {
			t.Error("setup-go or the build cache ran with an installed tailgate")
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

	// Releases: the action at a tag downloads that release's binary.
	asset := "tailgate-linux-" + runtime.GOARCH
	sums := func(b []byte) []byte {
		return []byte(fmt.Sprintf("%x  %s\n%x  tailgate-linux-other\n", sha256.Sum256(b), asset, sha256.Sum256([]byte("other"))))
	}
	srv.Release("octo/tailgate", "v0.9.0", map[string][]byte{asset: binBytes, "SHA256SUMS": sums(binBytes)})
	srv.Release("octo/tailgate", "v0", map[string][]byte{asset: binBytes, "SHA256SUMS": sums(binBytes)})
	srv.Release("octo/tailgate", "v0.9.2", map[string][]byte{asset: append(slices.Clone(binBytes), 0), "SHA256SUMS": sums(binBytes)})
	released := func(t *testing.T, run *actionRun, env []string, ref string) {
		t.Helper()
		if run.Outputs["exit-code"] != "1" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		if l := run.step(t, "Find tailgate").Log; !strings.Contains(l, "downloaded "+asset+" of release "+ref+": tailgate dev") {
			t.Errorf("Find tailgate:\n%s", l)
		}
		if run.step(t, "Build tailgate").Outcome != "skipped" || usesStep(t, run, "actions/setup-go@").Ran || usesStep(t, run, "actions/cache/restore@").Ran {
			t.Errorf("built, or set up Go, with a release binary:\n%s", run.Log)
		}
		if !slices.Contains(srv.Requests(), "GET /octo/tailgate/releases/download/"+ref+"/SHA256SUMS") {
			t.Errorf("requests: %v", srv.Requests())
		}
		if run.Outputs["tailgate"] != filepath.Join(runnerTemp(env), "tailgate-release", asset) {
			t.Errorf("output tailgate %q", run.Outputs["tailgate"])
		}
	}
	t.Run("release binary of the action's tag", func(t *testing.T) {
		for _, ref := range []string{"v0.9.0", "v0"} {
			gh, env := actionEnv(t, srv, 9)
			gh["action_ref"], gh["action_repository"] = ref, "octo/tailgate"
			w := clone(with)
			w["comment"] = "false"
			released(t, runAction(t, a, w, gh, env), env, ref)
		}
	})
	t.Run("tag read from the action's path, before github.action_ref", func(t *testing.T) {
		// Where the runner unpacks a used action: _actions/OWNER/NAME/REF.
		p := filepath.Join(t.TempDir(), "_actions", "octo", "tailgate", "v0.9.0")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(repoRoot, p); err != nil {
			t.Fatal(err)
		}
		gh, env := actionEnv(t, srv, 9)
		// An outer composite action's ref, as the runner gives a nested one.
		gh["action_path"], gh["action_ref"], gh["action_repository"] = p, "v7", "octo/outer"
		env = append(env, "GITHUB_ACTION_PATH="+p) // the action reads its path from there
		w := clone(with)
		w["comment"] = "false"
		released(t, runAction(t, a, w, gh, env), env, "v0.9.0")
	})
	t.Run("a release binary that fails its checksum is refused", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		gh["action_ref"], gh["action_repository"] = "v0.9.2", "octo/tailgate"
		w := clone(with)
		w["comment"] = "false"
		run := runAction(t, a, w, gh, env, withCache(cache))
		find := run.step(t, "Find tailgate")
		if find.Code != 3 || !strings.Contains(find.Log, "release v0.9.2: "+asset+" does not match its SHA256SUMS") ||
			run.step(t, "Build tailgate").Outcome != "skipped" || run.step(t, "Outcome").Code != 3 {
			t.Errorf("outputs %v\n%s", run.Outputs, run.Log)
		}
	})
	t.Run("a tag without a release is built", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		gh["action_ref"], gh["action_repository"] = "v0.9.3", "octo/tailgate"
		w := clone(with)
		w["comment"] = "false"
		run := runAction(t, a, w, gh, env, withCache(cache))
		if run.Outputs["exit-code"] != "1" || !strings.Contains(run.step(t, "Find tailgate").Log, "::notice title=tailgate::no release binary for v0.9.3") ||
			run.step(t, "Build tailgate").Outcome != "success" {
			t.Errorf("outputs %v\n%s", run.Outputs, run.Log)
		}
	})

	debianApt, ubuntuApt := aptDir(t, "URIs: http://deb.debian.org/debian\n"), aptDir(t, "URIs: http://archive.ubuntu.com/ubuntu/\n")

	t.Run("kernel: one gate call in the VM, every input and args reach it", func(t *testing.T) {
		fakes, log := tools(t, "apt-cache", "apt-get", "qemu-system-x86_64")
		wrapper, calls := standIn(t, slow)
		gh, env := actionEnv(t, srv, 9)
		// apt-cache knows no kernel package: the lists are not there yet.
		env = append(env, "PATH="+fakes+":"+os.Getenv("PATH"), "TAILGATE_ACTION_APT_DIR="+debianApt, "FAKE_APT_CACHE_EXIT=100")
		w := clone(with)
		w["tailgate"], w["candidate"], w["comment"] = wrapper, "", "false"
		w["kernel"], w["scenarios"], w["trials"], w["thresholds"] = "debian:6.1-cloud", "syscall-read\npipe-pingpong", "2", "p99=10%\np50=off"
		w["args"] = "--vcpus\n4\n  --cmdline\nconsole=ttyS0 quiet\n\n--accel=tcg\n"
		kc := newCacheStore(t)
		run := runAction(t, a, w, gh, env, withCache(kc))
		if run.Outputs["exit-code"] != "1" || run.step(t, "Enable KVM").Outcome != "success" || run.step(t, "Install QEMU").Outcome != "success" {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		tmp := runnerTemp(env)
		d, kernels := filepath.Join(tmp, "tailgate"), filepath.Join(tmp, "tailgate-kernels")
		want := []string{"gate", "--baseline", base, "--format", "github", "--format", "markdown=" + d + "/report.md",
			"--format", "json=" + d + "/report.json", "--format", "text=" + d + "/report.txt",
			"syscall-read", "pipe-pingpong", "--kernel", "debian:6.1-cloud", "--trials", "2", "-o", d + "/result.json",
			"--kernel-cache", kernels, "--threshold", "p99=10%", "--threshold", "p50=off",
			"--vcpus", "4", "--cmdline", "console=ttyS0 quiet", "--accel=tcg"}
		if got := calls(); len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("tailgate calls (one argument a line):\n%s\nwant one:\n%s", fmtCalls(got), strings.Join(want, "\n"))
		}
		if strings.Contains(mustRead(t, log), "sudo") {
			t.Errorf("a VM run went through sudo:\n%s", mustRead(t, log))
		}
		if up := usesStepNamed(t, run, "Upload the Result"); !strings.Contains(up.With["path"], d+"/result.json") {
			t.Errorf("artifact path %q lacks the VM run's Result", up.With["path"])
		}
		restore := run.Uses[slices.IndexFunc(run.Uses, func(u usedStep) bool { return u.Name == "Restore the kernel cache" })]
		if !restore.Ran || restore.With["path"] != kernels || !strings.HasPrefix(restore.With["key"], "tailgate-kernels-Linux-X64-") ||
			!strings.HasPrefix(restore.With["key"], restore.With["restore-keys"]) || !slices.Equal(kc.Saved, []string{restore.With["key"]}) {
			t.Errorf("kernel cache: restore %+v, saved %v", restore, kc.Saved)
		}
		if l := mustRead(t, log); !strings.Contains(l, "apt-get update -qq") || strings.Contains(l, "apt-get install") {
			t.Errorf("qemu present, kernel cache cold: want apt-get update alone:\n%s", l)
		}

		// Again: the kernels come from the cache; apt is not asked.
		os.Truncate(log, 0)
		gh, env = actionEnv(t, srv, 9)
		env = append(env, "PATH="+fakes+":"+os.Getenv("PATH"), "TAILGATE_ACTION_APT_DIR="+debianApt, "FAKE_APT_CACHE_EXIT=100")
		run = runAction(t, a, w, gh, env, withCache(kc))
		if run.Outputs["exit-code"] != "1" || len(kc.Saved) != 1 || strings.Contains(mustRead(t, log), "apt-") {
			t.Errorf("second run: outputs %v, saved %v, calls:\n%s\n%s", run.Outputs, kc.Saved, mustRead(t, log), run.Log)
		}
		if _, err := os.Stat(filepath.Join(runnerTemp(env), "tailgate-kernels", "vmlinuz-stand-in")); err != nil {
			t.Errorf("kernel cache not restored: %v", err)
		}
	})

	t.Run("bad inputs: one clear line each, exit 2, nothing built", func(t *testing.T) {
		for _, tc := range []struct {
			with map[string]string
			want string
		}{
			{map[string]string{"args": "--vcpus 4"}, `input args, line 1: "--vcpus 4": one argument per line; put --vcpus and its value on two lines, or write --vcpus=VALUE`},
			{map[string]string{"args": "--strict\n--trials\n3"}, "input args, line 2: --trials: the action sets it from its inputs"},
			{map[string]string{"args": "-o=x.json"}, "input args, line 1: -o: the action sets it"},
			{map[string]string{"strict": "yes"}, `input strict: "yes": want true or false`},
			{map[string]string{"save-baseline": "True "}, `input save-baseline: "True ": want true or false`},
			{map[string]string{"trials": "many"}, `input trials: "many": want a number of trials`},
			{map[string]string{"budget": "5m"}, "input budget: it caps a gate of base-* and head-* in one job"},
			{map[string]string{"kernel": "./bzImage"}, "candidate gates a Result made earlier and kernel runs one"},
			{map[string]string{"candidate": "", "baseline": "", "base-variant": "a", "head-variant": "b", "head-kernel": "./bzImage"}, "give exactly one base-* input"},
			{map[string]string{"candidate": "", "baseline": "", "base-kernel": "debian:6.1-cloud"}, "give exactly one base-* input"},
			{map[string]string{"baseline": ""}, "give base-* and head-* inputs (base and head in one job) or a stored baseline"},
		} {
			gh, env := actionEnv(t, srv, 9)
			w := clone(with)
			w["comment"] = "false"
			for k, v := range tc.with {
				w[k] = v
			}
			run := runAction(t, a, w, gh, env)
			if run.Outputs["exit-code"] != "2" || run.step(t, "Outcome").Code != 2 ||
				!strings.Contains(run.Log, "::error title=tailgate::"+tc.want) || !strings.Contains(run.Summary, tc.want) {
				t.Errorf("%v: outputs %v\nsummary:\n%s\n%s", tc.with, run.Outputs, run.Summary, run.Log)
			}
			if run.step(t, "Find tailgate").Outcome != "skipped" || usesStep(t, run, "actions/setup-go@").Ran {
				t.Errorf("%v: went on to get tailgate after a bad input", tc.with)
			}
		}
	})

	t.Run("a flag tailgate would ignore is exit 2", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		w := clone(with)
		w["tailgate"], w["comment"], w["args"] = bin, "false", "--vcpus\n4"
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "2" || !strings.Contains(run.Summary, "--vcpus only apply to a run; --candidate does not run") {
			t.Errorf("outputs %v\nsummary:\n%s", run.Outputs, run.Summary)
		}
	})

	t.Run("debian: kernels without Debian's apt sources", func(t *testing.T) {
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "TAILGATE_ACTION_APT_DIR="+ubuntuApt)
		w := map[string]string{"tailgate": bin, "base-kernel": "debian:6.1-cloud", "head-kernel": "./bzImage"}
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "2" || !strings.Contains(run.Summary, "debian: kernels are fetched from Debian's apt sources, and this runner") ||
			!strings.Contains(run.Summary, `run the job in a Debian container (container: {image: "debian:12", options: --device /dev/kvm})`) {
			t.Errorf("outputs %v\nsummary:\n%s", run.Outputs, run.Summary)
		}
	})

	t.Run("base and head in one job", func(t *testing.T) {
		wrapper, calls := standIn(t, slow)
		gh, env := actionEnv(t, srv, 9)
		w := map[string]string{"tailgate": wrapper, "scenarios": "timer-1ms", "base-variant": "base", "head-variant": "tuned:kernel.timer_migration=0", "budget": "5m", "args": "--retries\n2"}
		run := runAction(t, a, w, gh, env)
		if run.Outputs["exit-code"] != "1" || !run.Failed {
			t.Fatalf("outputs %v\n%s", run.Outputs, run.Log)
		}
		for _, s := range []string{"Install QEMU", "Enable KVM"} {
			if run.step(t, s).Outcome != "skipped" {
				t.Errorf("%s ran for host variants", s)
			}
		}
		d := filepath.Join(runnerTemp(env), "tailgate")
		want := []string{"gate", "--format", "github", "--format", "markdown=" + d + "/report.md", "--format", "json=" + d + "/report.json", "--format", "text=" + d + "/report.txt",
			"timer-1ms", "--variant", "base", "--variant", "tuned:kernel.timer_migration=0", "-o", d + "/result.json", "--budget", "5m", "--retries", "2"}
		if got := calls(); len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("tailgate calls:\n%s\nwant:\n%s", fmtCalls(got), strings.Join(want, "\n"))
		}
		if run.Outputs["result"] != d+"/result-tuned.json" || !strings.Contains(run.Outputs["results"], d+"/result-base.json") {
			t.Errorf("outputs %v: want the head's Result as result, both in results", run.Outputs)
		}
		for _, p := range strings.Fields(usesStepNamed(t, run, "Upload the Result").With["path"]) {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("artifact path %s matches no file", p)
			}
		}
	})

	// steps runs the inputs step and then the steps named, with PATH and
	// the uid as given.
	steps := func(t *testing.T, w map[string]string, path, uid string, names ...string) *actionRun {
		t.Helper()
		gh, env := actionEnv(t, srv, 9)
		env = append(env, "PATH="+path, "FAKE_UID="+uid, "TAILGATE_ACTION_APT_DIR="+debianApt)
		r := newRunner(t, a, w, gh, env)
		out := &actionRun{}
		for _, s := range a.Runs.Steps {
			if s.ID == "check" || slices.Contains(names, s.Name) {
				r.runStep(s, out)
			}
		}
		if len(out.Steps) != len(names)+1 {
			t.Fatalf("steps %+v, want inputs and %v", out.Steps, names)
		}
		return out
	}
	vmRun := map[string]string{"tailgate": bin, "kernel": "debian:6.1-cloud", "baseline": base}

	t.Run("QEMU only when a VM runs, installed when missing", func(t *testing.T) {
		noQEMU := func(more ...string) string { return toolDir(t, append([]string{"qemu-system-x86_64"}, more...)...) }
		for _, tc := range []struct {
			name, uid string
			with      map[string]string
			path      func(fakes string) string
			fails     bool
			want      []string // lines of the log of calls, or of the step
			not       []string
		}{
			{name: "root in a container, no sudo", uid: "0", path: func(f string) string { return f + ":" + noQEMU("sudo") },
				want: []string{"apt-get update -qq", "apt-get install -y -qq --no-install-recommends qemu-system-x86", "installing qemu-system-x86 for the VM runs"}, not: []string{"sudo"}},
			{name: "a runner with sudo", uid: "1001", path: func(f string) string { return f + ":" + noQEMU() },
				want: []string{"sudo apt-get update -qq", "sudo apt-get install -y -qq --no-install-recommends qemu-system-x86"}},
			{name: "neither root nor sudo", uid: "1001", path: func(f string) string { return f + ":" + noQEMU("sudo") }, fails: true,
				want: []string{"::error title=tailgate::VM runs need qemu-system-x86, and this job is neither root nor has sudo"}, not: []string{"apt-get install"}},
			{name: "install-qemu false", uid: "0", with: map[string]string{"install-qemu": "false"}, path: func(f string) string { return f + ":" + noQEMU() }, fails: true,
				want: []string{"::error title=tailgate::VM runs need qemu-system-x86_64, which is missing, and install-qemu is false"}, not: []string{"apt-get"}},
			{name: "present", uid: "0", path: func(f string) string { return f + ":" + os.Getenv("PATH") },
				want: []string{"VM runs: QEMU emulator version"}, not: []string{"apt-get install"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				names := []string{"apt-cache", "apt-get", "sudo", "id"}
				if tc.name == "present" {
					names = append(names, "qemu-system-x86_64")
				}
				fakes, log := tools(t, names...)
				if tc.name != "a runner with sudo" {
					os.Remove(filepath.Join(fakes, "sudo"))
				}
				w := clone(vmRun)
				for k, v := range tc.with {
					w[k] = v
				}
				out := steps(t, w, tc.path(fakes), tc.uid, "Install QEMU")
				s := out.Steps[1]
				got := mustRead(t, log) + s.Log
				if (s.Outcome == "failure") != tc.fails {
					t.Errorf("outcome %s (exit %d)", s.Outcome, s.Code)
				}
				for _, want := range tc.want {
					if !strings.Contains(got, want) {
						t.Errorf("no %q in:\n%s", want, got)
					}
				}
				for _, not := range tc.not {
					if strings.Contains(mustRead(t, log), not) {
						t.Errorf("%q in:\n%s", not, got)
					}
				}
			})
		}
	})

	t.Run("KVM", func(t *testing.T) {
		_, haveKVM := os.Stat("/dev/kvm")
		for _, tc := range []struct {
			name, uid string
			sudo      bool
			want, not []string
		}{
			{name: "runner with sudo", uid: "1001", sudo: true, want: []string{"sudo "}},
			{name: "root in a container, no sudo", uid: "0", not: []string{"sudo", "::notice title=tailgate::not root"}},
			{name: "neither root nor sudo", uid: "1001", want: []string{"::notice title=tailgate::not root and no sudo: /dev/kvm left as it is"}, not: []string{"chmod", "udevadm"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fakes, log := tools(t, "sudo", "udevadm", "chmod", "tee", "id")
				path := fakes + ":" + toolDir(t, "sudo")
				if !tc.sudo {
					os.Remove(filepath.Join(fakes, "sudo"))
				}
				out := steps(t, vmRun, path, tc.uid, "Enable KVM")
				s := out.Steps[1]
				calls := mustRead(t, log)
				if s.Outcome != "success" {
					t.Fatalf("%+v", s)
				}
				if haveKVM != nil {
					if !strings.Contains(s.Log, "::notice title=tailgate::no /dev/kvm") || calls != "" {
						t.Errorf("no /dev/kvm: want a notice and no calls:\n%s\n%s", s.Log, calls)
					}
					return
				}
				got := calls + s.Log
				if tc.name != "neither root nor sudo" {
					_, udev := os.Stat("/run/udev")
					want := "chmod 0666 /dev/kvm"
					if udev == nil {
						want = "udevadm trigger --name-match=kvm"
					}
					tc.want = append(tc.want, want)
				}
				for _, want := range tc.want {
					if !strings.Contains(got, want) {
						t.Errorf("no %q in:\n%s", want, got)
					}
				}
				for _, not := range tc.not {
					if strings.Contains(got, not) {
						t.Errorf("%q in:\n%s", not, got)
					}
				}
			})
		}
	})

	t.Run("host run as root in a container: no sudo", func(t *testing.T) {
		wrapper, calls := standIn(t, slow)
		fakes, log := tools(t, "id")
		for _, uid := range []string{"0", "1001"} {
			w := map[string]string{"tailgate": wrapper, "baseline": base, "scenarios": "syscall-read"}
			out := steps(t, w, fakes+":"+toolDir(t, "sudo"), uid, "Find tailgate", "Gate")
			gate := out.Steps[2]
			if gate.Outcome != "success" || len(calls()) == 0 || strings.Contains(mustRead(t, log), "sudo") {
				t.Errorf("uid %s: %+v\n%s", uid, gate, mustRead(t, log))
			}
			notice := strings.Contains(gate.Log, "::notice title=tailgate::not root and no sudo: tailgate runs as runner")
			if notice != (uid != "0") {
				t.Errorf("uid %s: notice %v:\n%s", uid, notice, gate.Log)
			}
		}
	})
}

// tools makes a directory to put first on PATH with stand-ins that log
// their command lines to log: sudo then runs the rest of its command line,
// tee also logs what it is fed, id answers with $FAKE_UID, apt-cache exits
// with $FAKE_APT_CACHE_EXIT, and qemu-system-x86_64 prints a version; the
// others only log.
func tools(t *testing.T, names ...string) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "calls.log")
	for _, name := range names {
		script := "#!/bin/bash\necho \"" + name + " $*\" >> " + log + "\n"
		switch name {
		case "sudo":
			script += "[ \"$1\" != -E ] || shift\nexec \"$@\"\n"
		case "tee":
			script += "cat >> " + log + "\n"
		case "id":
			script = "#!/bin/bash\ncase \"$1\" in -u) echo \"${FAKE_UID:-1001}\" ;; -un) echo runner ;; *) echo \"uid=${FAKE_UID:-1001}(runner)\" ;; esac\n"
		case "apt-cache":
			script += "exit \"${FAKE_APT_CACHE_EXIT:-0}\"\n"
		case "qemu-system-x86_64":
			script += "echo 'QEMU emulator version 7.2.0 (stand-in)'\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, log
}

// toolDir is a PATH directory with every command of this PATH but those
// named: a runner without sudo, or without QEMU.
func toolDir(t *testing.T, without ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			if slices.Contains(without, e.Name()) {
				continue
			}
			os.Symlink(filepath.Join(p, e.Name()), filepath.Join(dir, e.Name())) // the first of a name wins
		}
	}
	return dir
}

// standIn is a tailgate that records its arguments, one a line, and acts
// as a gate: the Result given where -o says (per target, named as the real
// one names them, for a gate in one job), a kernel in --kernel-cache, a
// Markdown report, and exit 1. calls returns the argument lists so far.
func standIn(t *testing.T, res string) (path string, calls func() [][]string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "args.log")
	path = filepath.Join(dir, "tailgate")
	os.WriteFile(path, []byte(`#!/bin/bash
{ echo "--- call"; printf '%s\n' "$@"; } >> `+log+`
out="" md="" kc="" pair=false
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    --format) case "$2" in markdown=*) md="${2#markdown=}" ;; esac; shift ;;
    --kernel-cache) kc="$2"; shift ;;
    --variant) pair=true; shift ;;
  esac
  shift
done
if [ -n "$out" ] && [ "$pair" = true ]; then
  cp `+res+` "${out%.json}-base.json"; echo "result of base written to ${out%.json}-base.json" >&2
  cp `+res+` "${out%.json}-tuned.json"; echo "result of tuned written to ${out%.json}-tuned.json" >&2
elif [ -n "$out" ]; then
  cp `+res+` "$out"
fi
[ -z "$kc" ] || { mkdir -p "$kc"; echo kernel > "$kc/vmlinuz-stand-in"; }
[ -z "$md" ] || echo "1 regression in 1 gated percentile." > "$md"
exit 1
`), 0o755)
	return path, func() [][]string {
		var out [][]string
		for _, c := range strings.Split(mustRead(t, log), "--- call\n")[1:] {
			out = append(out, strings.Split(strings.TrimSuffix(c, "\n"), "\n"))
		}
		return out
	}
}

func fmtCalls(calls [][]string) string {
	var b strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&b, "call %d:\n%s\n", i+1, strings.Join(c, "\n"))
	}
	return b.String()
}

// aptDir is an /etc/apt with one sources file.
func aptDir(t *testing.T, sources string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sources.list.d"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "sources.list.d", "os.sources"), []byte("Types: deb\n"+sources), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
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
