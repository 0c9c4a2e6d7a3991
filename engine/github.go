package engine

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tailgate-ci/tailgate/internal/github"
)

// GitHubBaseline says which stored baseline Fetch fetches:
// the artifact Artifact of Branch's pushes in Repo, unpacked into Dir.
type GitHubBaseline struct {
	Repo, Branch, Artifact, Dir string
}

// Fetch finds the baseline, the artifact of the newest successful push run
// of this workflow on the branch (github.Client.FindBaseline), and unpacks
// it into the directory, new or empty; env reads the variables a GitHub
// Actions job sets. None yet is said on log and is no error. What the
// job gave wrong is an InputError, what GitHub refused an InfraError.
func (g GitHubBaseline) Fetch(ctx context.Context, env func(string) string, w, log io.Writer) error {
	if ents, err := os.ReadDir(g.Dir); err == nil && len(ents) > 0 {
		return Inputf("-o %s: not empty; give a new or empty directory", g.Dir)
	}
	workflow, err := github.WorkflowFile(env("GITHUB_WORKFLOW_REF"))
	if err != nil {
		return Inputf("%v", err)
	}
	repoID, err := github.RepositoryID(env("GITHUB_EVENT_PATH"))
	if err != nil {
		return Inputf("%v", err)
	}
	c, err := github.New(env("GITHUB_API_URL"), g.Repo, env("GITHUB_TOKEN"))
	if err != nil {
		return &InputError{err}
	}
	b, err := c.FindBaseline(ctx, workflow, g.Branch, g.Artifact, repoID)
	if err != nil {
		return Infra(fmt.Errorf("baseline: %w", err))
	}
	if b == nil {
		fmt.Fprintf(log, "tailgate github baseline: no successful push run of %s on %s keeps %s: no baseline yet\n", workflow, g.Branch, g.Artifact)
		return nil
	}
	if err := c.DownloadArtifact(ctx, b.ArtifactID, g.Dir); err != nil {
		return Infra(fmt.Errorf("baseline: %w", err))
	}
	fmt.Fprintf(w, "baseline: %s of run %d, the push of %s to %s, in %s\n", g.Artifact, b.RunID, b.HeadSHA, g.Branch, g.Dir)
	return nil
}
