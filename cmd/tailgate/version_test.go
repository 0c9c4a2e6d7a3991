package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	want := regexp.MustCompile(`^tailgate \S+ \(commit \S+, go\S+, ` + runtime.GOOS + "/" + runtime.GOARCH + `\)\n$`)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := cli(args...)
		if code != exitPass || stderr != "" || !want.MatchString(stdout) {
			t.Errorf("tailgate %s: exit %d\nstdout: %q\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if code, _, stderr := cli("version", "extra"); code != exitUsage || !strings.Contains(stderr, "version takes no arguments") {
		t.Errorf("tailgate version extra: exit %d, stderr %s", code, stderr)
	}
}

// TestVersionLinked builds tailgate as make release does and checks that
// --version prints what the linker was told.
func TestVersionLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tailgate")
	}
	bin := filepath.Join(t.TempDir(), "tailgate")
	const pkg = "github.com/tailgate-ci/tailgate/internal/version"
	build := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", "-X "+pkg+".Version=v9.8.7 -X "+pkg+".Commit=0123456789abcdef0123456789abcdef01234567", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "tailgate v9.8.7 (commit 0123456789abcdef0123456789abcdef01234567, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"; string(out) != want {
		t.Errorf("--version: %q, want %q", out, want)
	}
}

// TestVersionFromCheckout builds tailgate in this checkout as make
// build does and checks version prints the checkout's commit, not
// "commit unknown": make build links it in from git, since Go's own stamp
// (vcs.revision, which version reads too) is missing where GOFLAGS says
// -buildvcs=false and in a git worktree.
func TestVersionFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tailgate")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("not a git checkout: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	if exec.Command("git", "diff", "--quiet", "HEAD").Run() != nil {
		commit += "-dirty"
	}
	bin := filepath.Join(t.TempDir(), "tailgate")
	if out, err := exec.Command("make", "-C", "../..", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "(commit "+commit+",") {
		t.Errorf("version %q, want commit %s", out, commit)
	}
}
