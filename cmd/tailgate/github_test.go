package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/github"
	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
)

func TestGitHubComment(t *testing.T) {
	dir := t.TempDir()
	srv := githubtest.New(t, "octo/kernel", "s3cret")
	srv.PageSize = 3
	for i := range 7 {
		srv.Seed(12, fmt.Sprintf("review comment %d", i))
	}
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":12}}`), 0o644)
	body := filepath.Join(dir, "report.md")
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GITHUB_REPOSITORY", "octo/kernel")
	t.Setenv("GITHUB_TOKEN", "s3cret")
	t.Setenv("GITHUB_EVENT_PATH", event)

	for i, want := range []string{"created comment", "updated comment"} {
		os.WriteFile(body, []byte(fmt.Sprintf("1 regression in 4 gated percentiles. (push %d)\n", i)), 0o644)
		code, stdout, stderr := cli("github", "comment", "--body", body)
		if code != 0 || !strings.HasPrefix(stdout, want) {
			t.Fatalf("push %d: exit %d\nstdout: %s\nstderr: %s", i, code, stdout, stderr)
		}
	}
	cs := srv.Comments(12)
	if len(cs) != 8 {
		t.Fatalf("%d comments, want 7 reviews and one report", len(cs))
	}
	if last := cs[7].Body; !strings.HasPrefix(last, github.DefaultMarker+"\n") || !strings.Contains(last, "(push 1)") {
		t.Errorf("report comment: %q", last)
	}
	// The second push read every page of comments (7 reviews + 1 report,
	// 3 a page) before deciding to update; GET /user, which finds whose
	// comments it may edit, is not a page.
	var pages int
	for _, r := range srv.Requests()[4:] {
		if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/comments") {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("second push read %d pages, want 3: %v", pages, srv.Requests())
	}

	t.Run("API error: one line, exit 3", func(t *testing.T) {
		srv.Fail("PATCH", 403, "Resource not accessible by integration")
		code, _, stderr := cli("github", "comment", "--body", body)
		if code != 3 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "403 Forbidden: Resource not accessible by integration") {
			t.Errorf("exit %d: %q", code, stderr)
		}
	})
	t.Run("unreachable API: exit 3", func(t *testing.T) {
		t.Setenv("GITHUB_API_URL", "http://127.0.0.1:1")
		if code, _, stderr := cli("github", "comment", "--body", body); code != 3 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exit %d: %q", code, stderr)
		}
	})
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no body", nil, nil, "--body FILE is required"},
		{"missing body file", nil, []string{"--body", filepath.Join(dir, "none.md")}, "none.md"},
		{"no token", map[string]string{"GITHUB_TOKEN": ""}, []string{"--body", body}, "GITHUB_TOKEN"},
		{"not a pull request", map[string]string{"GITHUB_EVENT_PATH": ""}, []string{"--body", body}, "--pr N"},
		{"no subcommand", nil, []string{"frob"}, "unknown subcommand"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := []string{"github", "comment"}
			if c.name == "no subcommand" {
				args = []string{"github"}
			}
			code, _, stderr := cli(append(args, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d: %q, want %q", code, stderr, c.want)
			}
		})
	}
}

// TestGitHubBaseline: github baseline unpacks main's stored baseline,
// a real Result in it, that gate --baseline then reads; with none yet it
// says so and exits 0, making no directory.
func TestGitHubBaseline(t *testing.T) {
	dir := t.TempDir()
	res := fakeRun{scenario: "syscall-read", scales: steady, seed: 5}.write(t, dir, "r.json")
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("result.json")
	w.Write(b)
	zw.Close()
	repo := githubtest.Repo(10, "octo/kernel")
	srv := githubtest.New(t, "octo/kernel", "ghs_tok")
	event := filepath.Join(dir, "event.json")
	os.WriteFile(event, []byte(`{"repository":{"id":10},"pull_request":{"number":12,"base":{"ref":"main"}}}`), 0o644)
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GITHUB_REPOSITORY", "octo/kernel")
	t.Setenv("GITHUB_TOKEN", "ghs_tok")
	t.Setenv("GITHUB_EVENT_PATH", event)
	t.Setenv("GITHUB_WORKFLOW_REF", "octo/kernel/.github/workflows/latency.yml@refs/pull/12/merge")

	none := filepath.Join(dir, "none")
	code, _, stderr := cli("github", "baseline", "--branch", "main", "--artifact", "tailgate-baseline", "-o", none)
	if _, err := os.Stat(none); code != 0 || !strings.Contains(stderr, "no baseline yet") || err == nil {
		t.Errorf("none yet: exit %d, stderr %q, %s made: %v", code, stderr, none, err)
	}

	srv.AddRun(githubtest.Run{ID: 100, Workflow: "latency.yml", Event: "push", HeadBranch: "main", HeadSHA: "aaa", Conclusion: "success",
		Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 1, Name: "tailgate-baseline", Zip: zb.Bytes()}}})
	out := filepath.Join(dir, "baseline")
	code, stdout, stderr := cli("github", "baseline", "--branch", "main", "--artifact", "tailgate-baseline", "-o", out)
	if code != 0 || !strings.Contains(stdout, "tailgate-baseline of run 100, the push of aaa to main") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, _, stderr := cli("compare", filepath.Join(out, "result.json"), res); code != 0 {
		t.Errorf("the unpacked Result does not compare: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli("github", "baseline", "--branch", "main", "--artifact", "tailgate-baseline", "-o", out); code != exitUsage || !strings.Contains(stderr, "not empty") {
		t.Errorf("into a full directory: exit %d, %s", code, stderr)
	}
}
