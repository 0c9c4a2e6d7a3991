package github

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// StoredBaseline is where a branch's stored baseline was found: the
// workflow run that pushed it and its artifact.
type StoredBaseline struct {
	RunID      int64
	HeadSHA    string
	ArtifactID int64
}

// ErrNotMadeByRun means the newest artifact of the baseline's name was
// not made by its run's own push to this repository: it is not used.
var ErrNotMadeByRun = errors.New("not made by that run's push to this repository")

// FindBaseline finds branch's stored baseline: the artifact named name
// of the newest successful push run of workflow (its file name) on
// branch in this repository (repoID), made by that run itself. Never by
// branch name alone: a fork's pull request from a branch called main
// runs the workflow too, and may upload an artifact of the same name. It
// returns nil when no such run keeps the artifact (none yet, or expired).
func (c *Client) FindBaseline(ctx context.Context, workflow, branch, name string, repoID int64) (*StoredBaseline, error) {
	q := url.Values{"branch": {branch}, "event": {"push"}, "status": {"success"}, "per_page": {"20"}}
	var runs struct {
		Runs []struct {
			ID             int64   `json:"id"`
			Event          string  `json:"event"`
			HeadBranch     string  `json:"head_branch"`
			HeadSHA        string  `json:"head_sha"`
			Repository     repoRef `json:"repository"`
			HeadRepository repoRef `json:"head_repository"`
		} `json:"workflow_runs"`
	}
	u := fmt.Sprintf("%s/repos/%s/actions/workflows/%s/runs?%s", c.BaseURL, c.Repo, url.PathEscape(workflow), q.Encode())
	if _, err := c.do(ctx, http.MethodGet, u, nil, &runs); err != nil {
		return nil, err
	}
	for _, run := range runs.Runs {
		if run.Event != "push" || run.HeadBranch != branch || run.Repository.ID != repoID || run.HeadRepository.ID != repoID {
			continue
		}
		var arts struct {
			Artifacts []struct {
				ID          int64  `json:"id"`
				Name        string `json:"name"`
				Expired     bool   `json:"expired"`
				WorkflowRun struct {
					ID               int64  `json:"id"`
					RepositoryID     int64  `json:"repository_id"`
					HeadRepositoryID int64  `json:"head_repository_id"`
					HeadSHA          string `json:"head_sha"`
				} `json:"workflow_run"`
			} `json:"artifacts"`
		}
		u := fmt.Sprintf("%s/repos/%s/actions/runs/%d/artifacts?%s", c.BaseURL, c.Repo, run.ID, url.Values{"name": {name}}.Encode())
		if _, err := c.do(ctx, http.MethodGet, u, nil, &arts); err != nil {
			return nil, err
		}
		kept := arts.Artifacts[:0]
		for _, a := range arts.Artifacts {
			if a.Name == name && !a.Expired {
				kept = append(kept, a)
			}
		}
		if len(kept) == 0 {
			continue // expired, or that run kept none
		}
		w := kept[0].WorkflowRun
		if len(kept) != 1 || w.ID != run.ID || w.RepositoryID != repoID || w.HeadRepositoryID != repoID || w.HeadSHA != run.HeadSHA {
			return nil, fmt.Errorf("artifact %s of run %d: %w of %s", name, run.ID, ErrNotMadeByRun, run.HeadSHA)
		}
		return &StoredBaseline{RunID: run.ID, HeadSHA: run.HeadSHA, ArtifactID: kept[0].ID}, nil
	}
	return nil, nil
}

type repoRef struct {
	ID int64 `json:"id"`
}

// maxArtifact bounds an artifact's download and what it unpacks to.
const maxArtifact = 512 << 20

// DownloadArtifact unpacks artifact id into dir, a new or empty
// directory: each file at its path in the archive, none outside dir.
func (c *Client) DownloadArtifact(ctx context.Context, id int64, dir string) error {
	u := fmt.Sprintf("%s/repos/%s/actions/artifacts/%d/zip", c.BaseURL, c.Repo, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("User-Agent", "tailgate")
	// The API redirects to storage; the client does not send the token
	// to another host.
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", pathOf(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: http.MethodGet, Path: pathOf(u), Status: resp.StatusCode}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxArtifact+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", pathOf(u), err)
	}
	if len(b) > maxArtifact {
		return fmt.Errorf("artifact %d: over %d bytes", id, maxArtifact)
	}
	return unzip(b, dir)
}

// unzip writes the files of the zip archive b under dir.
func unzip(b []byte, dir string) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("artifact: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var total uint64
	for _, f := range zr.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("artifact: %q is outside its directory", f.Name)
		}
		if strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				return err
			}
			continue
		}
		if total += f.UncompressedSize64; total > maxArtifact {
			return fmt.Errorf("artifact: over %d bytes unpacked", maxArtifact)
		}
		if !f.Mode().IsRegular() {
			return fmt.Errorf("artifact: %q is not a regular file", f.Name)
		}
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("artifact: %s: %w", f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(r, maxArtifact+1))
		r.Close()
		if err != nil {
			return fmt.Errorf("artifact: %s: %w", f.Name, err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WorkflowFile is the file name of the workflow a job runs, from
// GITHUB_WORKFLOW_REF ("owner/repo/.github/workflows/gate.yml@refs/heads/main").
func WorkflowFile(ref string) (string, error) {
	p, _, _ := strings.Cut(ref, "@")
	if i := strings.Index(p, "/.github/workflows/"); i >= 0 && !strings.Contains(p[i+len("/.github/workflows/"):], "/") && p[i+len("/.github/workflows/"):] != "" {
		return p[i+len("/.github/workflows/"):], nil
	}
	return "", fmt.Errorf("workflow ref %q: want OWNER/REPO/.github/workflows/FILE@REF (GITHUB_WORKFLOW_REF)", ref)
}

// RepositoryID reads the repository's ID from the event payload at
// eventPath (GITHUB_EVENT_PATH).
func RepositoryID(eventPath string) (int64, error) {
	if eventPath == "" {
		return 0, errors.New("no event payload: GITHUB_EVENT_PATH is not set")
	}
	b, err := os.ReadFile(eventPath)
	if err != nil {
		return 0, fmt.Errorf("event payload: %w", err)
	}
	var ev struct {
		Repository struct {
			ID int64 `json:"id"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.Repository.ID == 0 {
		return 0, fmt.Errorf("event payload %s: no repository.id", eventPath)
	}
	return ev.Repository.ID, nil
}
