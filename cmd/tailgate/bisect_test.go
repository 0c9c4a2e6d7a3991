package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitIn returns a function that runs git in a new repository at dir.
func gitIn(t *testing.T, dir string) func(args ...string) string {
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return strings.TrimSpace(string(b))
	}
	git("init", "--quiet", "--initial-branch=main")
	return git
}

// TestBisectBadInput checks that what bisect cannot start from is one
// line and exit 2, before anything is built.
func TestBisectBadInput(t *testing.T) {
	sc, err := filepath.Abs("../../testdata/program/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	git := gitIn(t, repo)
	for i := range 2 {
		git("commit", "--quiet", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a repository", []string{"--good", "HEAD~1", "--bad", "HEAD", "--build", "make", "--repo", t.TempDir(), sc}, "not a git checkout"},
		{"unknown commit", []string{"--good", "nosuch", "--bad", "HEAD", "--build", "make", "--repo", repo, sc}, "--good nosuch: no such commit"},
		{"good after bad", []string{"--good", "HEAD", "--bad", "HEAD~1", "--build", "make", "--repo", repo, sc}, "is not an ancestor"},
		{"no build", []string{"--good", "HEAD~1", "--bad", "HEAD", "--repo", repo, sc}, "--build: give the shell command"},
		{"no scenario", []string{"--good", "HEAD~1", "--bad", "HEAD", "--build", "make"}, "want --good A --bad B --build CMD SCENARIO"},
		{"a built-in, not a kernel", []string{"--good", "HEAD~1", "--bad", "HEAD", "--build", "make", "--repo", repo, "syscall-read"}, "or with --kernel a kernel"},
		{"a command line, not a kernel", []string{"--good", "HEAD~1", "--bad", "HEAD", "--build", "make", "--repo", repo, "--cmdline-file", "boot/cmdline", sc}, "give --kernel too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runInProcess(t, append([]string{"bisect"}, tc.args...)...)
			if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and one line saying %q\nstdout: %s\nstderr: %s", code, tc.want, stdout, stderr)
			}
		})
	}
	// Known only once the good commit is built: its progress comes first.
	code, stdout, stderr := runInProcess(t, "bisect", "--good", "HEAD~1", "--bad", "HEAD", "--build", "true", "--repo", repo, "--kernel", "bzImage", "syscall-read")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != exitUsage || stdout != "" || !strings.Contains(lines[len(lines)-1], "--kernel bzImage: the build of") {
		t.Errorf("a kernel the build did not leave: exit %d, want 2 ending in one line saying so\nstderr: %s", code, stderr)
	}
}

// TestBisectProgram bisects a real history of testdata/program/work.c:
// five commits, from the third on three times the work per tg_op (as in
// TestGateProgramBuilds, what a gate beside other work catches every
// time). Every step is built with cc and gated for real, so bisect must
// name the third commit, leave the checkout as it was and no temporary
// directory behind. The gates take a threshold of ±30%: three times the
// work (p99 ×3.15 [×2.85, ×3.50] at the first look in one run) is well
// over it, and two builds of one source are called no change within a
// few looks, where ±10% needs more, and a good step called inconclusive
// is skipped. 10 reruns alone: 10 pass, 44-46 s each.
func TestBisectProgram(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Fatal("needs cc")
	}
	bin := buildTailgate(t)
	repo := t.TempDir()
	src, err := os.ReadFile("../../testdata/program/work.c")
	if err != nil {
		t.Fatal(err)
	}
	bench, err := os.ReadFile("../../testdata/program/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	git := gitIn(t, repo)
	files := map[string]string{"bench.yaml": string(bench), ".gitignore": "work\n"}
	var commits []string
	for i, iter := range []int{200, 200, 600, 600, 600} {
		files["work.c"] = strings.Replace(string(src), "#define ITER 200", fmt.Sprintf("#define ITER %d", iter), 1)
		files["NOTES"] = fmt.Sprintf("commit %d\n", i)
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "--all")
		git("commit", "--quiet", "-m", fmt.Sprintf("c%d: ITER %d", i, iter))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	if !strings.Contains(files["work.c"], "#define ITER 600") {
		t.Fatal("work.c's ITER default not found")
	}

	tmp, keep := t.TempDir(), filepath.Join(t.TempDir(), "steps")
	cmd := exec.Command(bin, "bisect", "--repo", repo, "--good", commits[0], "--bad", "main",
		"--build", "cc -O2 -o work work.c", "-o", keep, filepath.Join(repo, "bench.yaml"),
		"--", "--duration", "200ms", "--budget", "120s", "--threshold", "p99=30%")
	cmd.Env = append(cmd.Environ(), "CI=true", "TMPDIR="+tmp)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	cmd.Run()
	var steps []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "bisect: ") {
			steps = append(steps, l)
		}
	}
	t.Logf("bisect took %s\n%s\n%s", time.Since(start).Round(time.Second), strings.Join(steps, "\n"), stdout.String())
	if code := cmd.ProcessState.ExitCode(); code != exitRegression {
		t.Fatalf("exit %d, want 1 (the regression bisected)\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "first bad commit: "+commits[2]) {
		t.Errorf("want %s (c2) named the first bad commit\nstdout:\n%s\nstderr:\n%s", commits[2], stdout.String(), stderr.String())
	}
	if got := git("status", "--porcelain"); got != "" {
		t.Errorf("checkout changed:\n%s", got)
	}
	if got := git("worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(keep, "bisect.log")); err != nil {
		t.Errorf("-o keeps git's bisect log: %v", err)
	}
}

// TestBisectInterrupt interrupts a bisect while the good commit builds:
// exit 3, the build stopped, the worktrees removed and nothing left in
// TMPDIR.
func TestBisectInterrupt(t *testing.T) {
	bin := buildTailgate(t)
	repo := t.TempDir()
	git := gitIn(t, repo)
	bench, err := os.ReadFile("../../testdata/program/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "bench.yaml"), bench, 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "bench.yaml")
	git("commit", "--quiet", "-m", "c0")
	git("commit", "--quiet", "--allow-empty", "-m", "c1")
	tmp, pidFile := t.TempDir(), filepath.Join(t.TempDir(), "build.pid")
	cmd := exec.Command(bin, "bisect", "--repo", repo, "--good", "HEAD~1", "--bad", "HEAD",
		"--build", "echo $$ > "+pidFile+".new && mv "+pidFile+".new "+pidFile+" && exec sleep 60", filepath.Join(repo, "bench.yaml"))
	cmd.Env = append(cmd.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatalf("the build never started\n%s", stderr.String())
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInfra || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, want 3 and the interrupt said\n%s", code, stderr.String())
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s to stop after the interrupt", d)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the build (pid %d) still runs", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if got := git("worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}
