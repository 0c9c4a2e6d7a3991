package github

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
)

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, text := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFindBaseline: the newest successful push run of the workflow on
// the branch in this repository whose artifact that run made; never a
// fork's newer pull-request run from a branch called main.
func TestFindBaseline(t *testing.T) {
	repo := githubtest.Repo(10, "octo/kernel")
	fork := githubtest.Repo(66, "mallory/kernel")
	const artifact = "tailgate-baseline"
	newServer := func() *githubtest.Server {
		srv := githubtest.New(t, "octo/kernel", "ghs_tok")
		srv.AddRun(githubtest.Run{ID: 100, Workflow: "latency-gate.yml", Event: "push", HeadBranch: "main", HeadSHA: "aaa", Conclusion: "success",
			Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 1, Name: artifact,
				Zip: zipOf(t, map[string]string{"syscall-read/host.json": "{}"})}}})
		// The poison: newer, successful, on a branch called main, with
		// the baseline's artifact name.
		srv.AddRun(githubtest.Run{ID: 200, Workflow: "latency-gate.yml", Event: "pull_request", HeadBranch: "main", HeadSHA: "bad", Conclusion: "success",
			Repository: repo, HeadRepository: fork, Artifacts: []githubtest.Artifact{{ID: 2, Name: artifact}}})
		return srv
	}
	for _, c := range []struct {
		name  string
		setup func(*githubtest.Server)
		runID int64
		err   error
	}{
		{"main's push run, not the fork's", nil, 100, nil},
		{"an expired artifact: the push run before it", func(s *githubtest.Server) {
			s.AddRun(githubtest.Run{ID: 150, Workflow: "latency-gate.yml", Event: "push", HeadBranch: "main", HeadSHA: "ccc", Conclusion: "success",
				Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 3, Name: artifact, Expired: true}}})
		}, 100, nil},
		{"an artifact another commit made: refused", func(s *githubtest.Server) {
			s.AddRun(githubtest.Run{ID: 160, Workflow: "latency-gate.yml", Event: "push", HeadBranch: "main", HeadSHA: "ddd", Conclusion: "success",
				Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 4, Name: artifact,
					WorkflowRun: githubtest.ArtifactRun{ID: 160, RepositoryID: 10, HeadRepositoryID: 66, HeadBranch: "main", HeadSHA: "bad"}}}})
		}, 0, ErrNotMadeByRun},
		{"another workflow's push run: not looked at", func(s *githubtest.Server) {
			s.AddRun(githubtest.Run{ID: 170, Workflow: "other.yml", Event: "push", HeadBranch: "main", HeadSHA: "eee", Conclusion: "success",
				Repository: repo, HeadRepository: repo, Artifacts: []githubtest.Artifact{{ID: 5, Name: artifact}}})
		}, 100, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer()
			if c.setup != nil {
				c.setup(srv)
			}
			cl, err := New(srv.URL, "octo/kernel", "ghs_tok")
			if err != nil {
				t.Fatal(err)
			}
			b, err := cl.FindBaseline(context.Background(), "latency-gate.yml", "main", artifact, 10)
			if !errors.Is(err, c.err) || (c.err == nil && (b == nil || b.RunID != c.runID)) {
				t.Fatalf("FindBaseline = %+v, %v; want run %d, error %v", b, err, c.runID, c.err)
			}
			if slices.ContainsFunc(srv.Requests(), func(r string) bool { return strings.Contains(r, "/runs/200/") }) {
				t.Errorf("looked at the fork's run: %v", srv.Requests())
			}
			if b == nil {
				return
			}
			dir := filepath.Join(t.TempDir(), "baseline")
			if err := cl.DownloadArtifact(context.Background(), b.ArtifactID, dir); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "syscall-read", "host.json")); err != nil || string(got) != "{}" {
				t.Errorf("unpacked %q, %v", got, err)
			}
		})
	}
	t.Run("no push run yet: none", func(t *testing.T) {
		srv := githubtest.New(t, "octo/kernel", "ghs_tok")
		cl, _ := New(srv.URL, "octo/kernel", "ghs_tok")
		if b, err := cl.FindBaseline(context.Background(), "latency-gate.yml", "main", artifact, 10); b != nil || err != nil {
			t.Errorf("FindBaseline = %+v, %v; want none", b, err)
		}
	})
}

// TestUnzipRefuses: an archive entry outside the directory is refused.
func TestUnzipRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"../evil.json", "/etc/evil"} {
		if err := unzip(zipOf(t, map[string]string{name: "x"}), filepath.Join(dir, "out")); err == nil {
			t.Errorf("%s unpacked", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.json")); err == nil {
		t.Error("wrote outside the directory")
	}
}

func TestWorkflowFile(t *testing.T) {
	if f, err := WorkflowFile("octo/kernel/.github/workflows/latency-gate.yml@refs/heads/main"); err != nil || f != "latency-gate.yml" {
		t.Errorf("WorkflowFile = %q, %v", f, err)
	}
	if _, err := WorkflowFile("octo/kernel@refs/heads/main"); err == nil {
		t.Error("a ref without a workflow file read")
	}
}
