package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// execFunc runs one request on a target in place of the target itself.
type execFunc func(ctx context.Context, t engine.Target, req runner.Request, p *progress.Reporter) (*result.Result, error)

// hooked is a host or VM target whose runs exec stands in for; it
// prepares nothing, as exec does that itself.
type hooked struct {
	engine.Target
	exec execFunc
}

func (h hooked) Prepare(req runner.Request) (runner.Request, error) { return req, nil }

func (h hooked) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	return h.exec(ctx, h.Target, req, p)
}

// hook makes every host and VM target of a run exec's.
func hook(exec execFunc) func(engine.Target) engine.Target {
	return func(t engine.Target) engine.Target { return hooked{t, exec} }
}

// fakeExec stands in for a target's run: it records each request and
// returns a synthetic Result whose latencies are scaled per target.
type fakeExec struct {
	calls  []string // "TARGET:scenario,scenario"
	scales map[string]float64
	// during, if set, runs inside each trial (to look at sysctls, to fail).
	during func(ctx context.Context, target string) error
}

func (f *fakeExec) exec(ctx context.Context, t engine.Target, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	name := req.Target.Name
	var names []string
	for _, s := range req.Scenarios {
		names = append(names, s.Name)
		if r := req.Resolve(s); r.Trials != 1 || r.Warmup != s.Warmup {
			return nil, fmt.Errorf("round request for %s: %d trials, warmup %s; want 1 trial and the scenario's warmup %s", s.Name, r.Trials, r.Warmup, s.Warmup)
		}
	}
	f.calls = append(f.calls, name+":"+strings.Join(names, ","))
	if f.during != nil {
		if err := f.during(ctx, name); err != nil {
			return nil, err
		}
	}
	scale := 1.0
	if s, ok := f.scales[name]; ok {
		scale = s
	}
	res := fakeRun{scenario: req.Scenarios[0].Name, scales: []float64{scale}, seed: uint64(len(f.calls))}.result()
	res.Target = req.Target
	r := req.Resolve(req.Scenarios[0])
	def, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	res.Scenarios[0].Definition, res.Scenarios[0].Params = def, scenarios.Params(r)
	return res, nil
}

func (f *fakeExec) env(root string) roundsEnv {
	return roundsEnv{wrap: hook(f.exec), sysctlRoot: root}
}

func runMatrixWith(env roundsEnv, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = exitCode(runMatrix(context.Background(), args, &o, &e, env))
	return code, o.String(), e.String()
}

// fakeSysctls makes a /proc/sys look-alike with vm.swappiness = 60.
func fakeSysctls(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "vm", "swappiness"), []byte("60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func readSysctl(t *testing.T, root string) string {
	t.Helper()
	v, err := sysctl.Read(root, "vm.swappiness")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMatrixInterleaves(t *testing.T) {
	f := &fakeExec{}
	code, _, stderr := runMatrixWith(f.env(fakeSysctls(t)),
		"--variant", "A", "syscall-read", "--kernel", "debian:6.1-cloud nohz_full=1", "--variant=C:vm.swappiness=10", "--trials", "3")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		// Forwards, backwards, forwards: drift falls on every target alike.
		"A:syscall-read", "6.1-cloud+nohz_full-1:syscall-read", "C:syscall-read",
		"C:syscall-read", "6.1-cloud+nohz_full-1:syscall-read", "A:syscall-read",
		"A:syscall-read", "6.1-cloud+nohz_full-1:syscall-read", "C:syscall-read",
	}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
}

// Without --trials, each scenario gets its own trials: a scenario that
// wants fewer drops out of the later rounds.
func TestMatrixRoundsFollowScenarioTrials(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	os.WriteFile(two, []byte("name: two\nworkload: {kind: timer, interval: 1ms}\ntrials: 2\nduration: 1s\nwarmup: 10ms\n"), 0o644)
	three := filepath.Join(dir, "three.yaml")
	os.WriteFile(three, []byte("name: three\nworkload: {kind: timer, interval: 1ms}\ntrials: 3\nduration: 1s\nwarmup: 20ms\n"), 0o644)
	f := &fakeExec{}
	if code, _, stderr := runMatrixWith(f.env(fakeSysctls(t)), "--variant", "A", "--variant", "B", two, three); code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{"A:two,three", "B:two,three", "B:two,three", "A:two,three", "A:three", "B:three"}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
}

// The matrix verdict of B against A is the verdict compare gives the
// Results the matrix wrote.
func TestMatrixVerdictIsCompares(t *testing.T) {
	dir := t.TempDir()
	f := &fakeExec{scales: map[string]float64{"B": 1.4, "C": 1.0}}
	out := filepath.Join(dir, "res.json")
	mjson := filepath.Join(dir, "matrix.json")
	code, stdout, stderr := runMatrixWith(f.env(fakeSysctls(t)),
		"--variant", "A", "--variant", "B", "--variant", "C", "syscall-read", "--trials", "4",
		"-o", out, "--format", "json="+mjson, "--format", "text")
	if code != exitRegression {
		t.Fatalf("matrix exit %d, want 1 (B is 40%% slower)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "B vs A: ") || !strings.Contains(stdout, "REGRESSION") {
		t.Errorf("text report:\n%s", stdout)
	}
	var doc render.JSONMatrix
	b, err := os.ReadFile(mjson)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for i, tg := range []string{"B", "C"} {
		ccode, cout, cerr := cli("compare", filepath.Join(dir, "res-A.json"), filepath.Join(dir, "res-"+tg+".json"), "--force", "--format", "json")
		wantCode := map[string]int{"B": exitRegression, "C": exitPass}[tg]
		if ccode != wantCode {
			t.Errorf("compare A %s: exit %d, want %d: %s", tg, ccode, wantCode, cerr)
		}
		var cmpDoc render.JSONReport
		if err := json.Unmarshal([]byte(cout), &cmpDoc); err != nil {
			t.Fatal(err)
		}
		// The matrix judges every target's tests as one family (Holm over
		// all of them), so each is judged at a level at most compare's:
		// the same numbers, the same verdicts here, a stricter level.
		for _, s := range doc.Comparisons[i].Scenarios {
			for _, v := range s.Verdicts {
				if v.Level != nil && *v.Level > 0.01 {
					t.Errorf("%s %s %s judged at level %v, above the family's 1%%", tg, v.Metric, v.Percentile, *v.Level)
				}
			}
		}
		if diff := cmp.Diff(cmpDoc, doc.Comparisons[i], cmpopts.IgnoreFields(render.JSONVerdict{}, "Level"), cmpopts.IgnoreFields(render.JSONReport{}, "Tests")); diff != "" {
			t.Errorf("%s vs A: matrix differs from compare (-compare +matrix):\n%s", tg, diff)
		}
	}
	r, err := result.Load(filepath.Join(dir, "res-B.json"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct{ Trials int }
	if s := r.Scenarios[0]; s.Trials != 4 || json.Unmarshal(s.Definition, &def) != nil || def.Trials != 4 {
		t.Errorf("merged B: %d trials, definition says %d; want 4", s.Trials, def.Trials)
	}
}

// --format junit=FILE and --format github render the matrix: a test case
// per target, gated metric and percentile, and an annotation per
// regression naming its target.
func TestMatrixJUnitGitHub(t *testing.T) {
	dir := t.TempDir()
	f := &fakeExec{scales: map[string]float64{"B": 1.4}}
	junit := filepath.Join(dir, "matrix.xml")
	code, stdout, stderr := runMatrixWith(f.env(fakeSysctls(t)),
		"--variant", "A", "--variant", "B", "--variant", "C", "syscall-read", "--trials", "4",
		"--format", "junit="+junit, "--format", "github")
	if code != exitRegression {
		t.Fatalf("exit %d, want 1 (B is 40%% slower)\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	// syscall-read gates p99 of syscall.read: a test per target after A.
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("junit: %d tests, %d failures; want 2 and 1:\n%s", doc.Tests, doc.Failures, b)
	}
	for _, c := range doc.Suites[0].Cases {
		if want := c.Failure != nil; strings.HasPrefix(c.Name, "B vs A: ") != want {
			t.Errorf("case %q: failure %v; want B's regression the one failure", c.Name, want)
		}
	}
	var errs []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "::error ") {
			errs = append(errs, l)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "::error title=tailgate%3A B syscall-read syscall.read p99 regression::B vs A: ") {
		t.Errorf("want one error annotation, of B:\n%s", stdout)
	}
	for _, h := range []string{"::notice title=tailgate::B vs A: 1 regression", "::notice title=tailgate::C vs A: No regressions"} {
		if !strings.Contains(stdout, h) {
			t.Errorf("no headline notice %q:\n%s", h, stdout)
		}
	}
}

// A variant's sysctls are in force during its own trials only, and put
// back after each.
func TestMatrixVariantSysctls(t *testing.T) {
	root := fakeSysctls(t)
	var seen []string
	f := &fakeExec{during: func(ctx context.Context, target string) error {
		seen = append(seen, target+"="+readSysctl(t, root))
		return nil
	}}
	code, _, stderr := runMatrixWith(f.env(root), "--variant", "base", "--variant", "low:vm.swappiness=10", "syscall-read", "--trials", "2")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff([]string{"base=60", "low=10", "low=10", "base=60"}, seen); diff != "" {
		t.Errorf("vm.swappiness during each trial (-want +got):\n%s", diff)
	}
	if v := readSysctl(t, root); v != "60" {
		t.Errorf("vm.swappiness = %s after the matrix, want 60", v)
	}
}

func TestMatrixRestoresOnFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		during   func(root string) func(context.Context, string) error
		wantCode int
		wantErr  string
	}{
		{
			name: "trial fails",
			during: func(string) func(context.Context, string) error {
				return func(_ context.Context, target string) error {
					if target == "low" {
						return errors.New("attach sched: boom")
					}
					return nil
				}
			},
			wantCode: exitInfra, wantErr: "attach sched: boom",
		},
		{
			name: "interrupted",
			during: func(string) func(context.Context, string) error {
				return func(ctx context.Context, target string) error {
					if target == "low" {
						return context.Canceled
					}
					return nil
				}
			},
			wantCode: exitInfra, wantErr: "interrupted in round 1/2 on low; sysctls restored",
		},
		{
			// Something takes the file away: the value cannot be put back.
			name: "restore fails",
			during: func(root string) func(context.Context, string) error {
				return func(_ context.Context, target string) error {
					if target != "low" {
						return nil
					}
					p := filepath.Join(root, "vm", "swappiness")
					os.Remove(p)
					return os.Mkdir(p, 0o755)
				}
			},
			wantCode: exitInfra, wantErr: "SYSCTLS NOT RESTORED, this machine is left changed: could not restore sysctl vm.swappiness to \"60\"",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeSysctls(t)
			f := &fakeExec{during: tc.during(root)}
			var o, e bytes.Buffer
			err := runMatrix(context.Background(), []string{"--variant", "base", "--variant", "low:vm.swappiness=10", "syscall-read", "--trials", "2"}, &o, &e, f.env(root))
			if code := exitCode(err); code != tc.wantCode || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("exit %d, error %v; want exit %d and %q", code, err, tc.wantCode, tc.wantErr)
			}
			if tc.name == "restore fails" {
				if !strings.Contains(err.Error(), "sysctl -w vm.swappiness=60") {
					t.Errorf("error does not say how to restore by hand: %v", err)
				}
				return
			}
			if v := readSysctl(t, root); v != "60" {
				t.Errorf("vm.swappiness = %s, want 60 restored", v)
			}
			// A broken round runs once more (--retries 1), then the
			// matrix stops.
			want := 2
			if tc.name == "trial fails" {
				want = 3
			}
			if len(f.calls) != want {
				t.Errorf("runs %v: want %d, none after the failure", f.calls, want)
			}
		})
	}
}

// A round that breaks once runs again; the broken try leaves no trace.
func TestMatrixRetriesBrokenRound(t *testing.T) {
	failed := false
	f := &fakeExec{during: func(_ context.Context, target string) error {
		if target == "B" && !failed {
			failed = true
			return errors.New("vm: guest oops")
		}
		return nil
	}}
	dir := t.TempDir()
	code, _, stderr := runMatrixWith(f.env(fakeSysctls(t)), "--variant", "A", "--variant", "B", "syscall-read", "--trials", "2", "-o", filepath.Join(dir, "r.json"))
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := []string{"A:syscall-read", "B:syscall-read", "B:syscall-read", "B:syscall-read", "A:syscall-read"}; !cmp.Equal(want, f.calls) {
		t.Errorf("runs %v, want %v", f.calls, want)
	}
	if !strings.Contains(stderr, "guest oops; retrying the round (1/1)") {
		t.Errorf("stderr does not say the round is retried:\n%s", stderr)
	}
	r, err := result.Load(filepath.Join(dir, "r-B.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Scenarios[0].Trials != 2 || r.Partial {
		t.Errorf("B: %d trials, partial %v; want 2 whole", r.Scenarios[0].Trials, r.Partial)
	}
}

func TestMatrixUsage(t *testing.T) {
	root := fakeSysctls(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--variant", "A", "syscall-read"}, "at least two targets"},
		{[]string{"--variant", "A", "--variant", "A"}, "target A given twice"},
		{[]string{"--variant", "A", "--variant", "B:vm.nope=1"}, "variant B: sysctl vm.nope: no such parameter"},
		{[]string{"--variant", "A", "--variant", "B:vm.swappiness"}, "want KEY=VALUE"},
		{[]string{"--variant", "A", "--variant", "a/b"}, "must be letters"},
		{[]string{"--variant", "A", "--variant", "B", "--format", "xml"}, `unknown format "xml"`},
	} {
		f := &fakeExec{}
		code, _, _ := runMatrixWith(f.env(root), tc.args...)
		var o, e bytes.Buffer
		err := runMatrix(context.Background(), tc.args, &o, &e, f.env(root))
		if code != exitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: exit %d, %v; want exit 2 and %q", tc.args, code, err, tc.want)
		}
		if len(f.calls) > 0 {
			t.Errorf("%q: ran %v", tc.args, f.calls)
		}
	}
}

// The real thing: tailgate matrix with a variant that changes
// vm.swappiness, interrupted with SIGINT while the variant runs. The value
// must be back when the process has exited.
func TestMatrixSIGINTRestoresSysctl(t *testing.T) {
	const key = "vm.swappiness"
	testenv.Need(t, testenv.Sysctl(key))
	testenv.Need(t, testenv.Root) // to write /proc/sys
	orig, err := sysctl.Read(sysctl.Root, key)
	if err != nil {
		t.Fatal(err)
	}
	want := "61"
	if orig == want {
		want = "59"
	}
	bin := buildTailgate(t)
	dir := t.TempDir()
	// A timer workload measures itself: no tracer, so no BPF needed.
	sc := filepath.Join(dir, "tick.yaml")
	if err := os.WriteFile(sc, []byte("name: tick\nworkload: {kind: timer, interval: 1ms}\ntrials: 3\nwarmup: 0s\nduration: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "matrix", sc, "--variant", "base", "--variant", "swap:"+key+"="+want, "-o", filepath.Join(dir, "r.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "CI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Before any trial the variant's value is probed (written and put
	// back at once): only a value that holds for 300 ms is the variant's
	// trial running, still well inside its 2 s.
	deadline := time.Now().Add(30 * time.Second)
	var held time.Time
	for {
		v, _ := sysctl.Read(sysctl.Root, key)
		if v != want {
			held = time.Time{}
		} else if held.IsZero() {
			held = time.Now()
		} else if time.Since(held) >= 300*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %s while the variant ran\n%s", key, want, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInfra {
		t.Errorf("exit %v, want %d\n%s", err, exitInfra, stderr.String())
	}
	if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
		// Put it back for the machine's sake before failing.
		os.WriteFile("/proc/sys/vm/swappiness", []byte(orig), 0o644)
		t.Fatalf("%s = %s after SIGINT, want %s restored\n%s", key, v, orig, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	// The base variant's finished trial is kept.
	if _, err := os.Stat(filepath.Join(dir, "r-base.json")); err != nil {
		t.Errorf("partial result of base: %v", err)
	}
	t.Logf("stderr:\n%s", stderr.String())
}

// compare --format html=FILE writes the page with a tail and a trial plot
// per metric, like the matrix's.
func TestCompareHTML(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	slow := fakeRun{scenario: "syscall-read", scales: []float64{1.4, 1.41, 1.39, 1.4, 1.4}, seed: 3}.write(t, dir, "slow.json")
	page := filepath.Join(dir, "report.html")
	code, _, stderr := cli("compare", base, slow, "--format", "html="+page)
	if code != exitRegression {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="tail--syscall-read--syscall-read"`, `id="trials--syscall-read--syscall-read"`, `class="v-regression"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(string(b), "<svg"); n != 2 {
		t.Errorf("%d <svg> elements, want 2", n)
	}
}
