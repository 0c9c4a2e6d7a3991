package github

import (
	"io"
	"os"
)

// FromEnv returns the client for repo that a GitHub Actions job's
// environment (getenv) sets up, GITHUB_API_URL and GITHUB_TOKEN, and the
// pull request to comment on: n, or when n is 0 the one of the payload at
// GITHUB_EVENT_PATH. Every error is the settings'.
func FromEnv(getenv func(string) string, repo string, n int) (*Client, int, error) {
	if n == 0 {
		var err error
		if n, err = PullRequestNumber(getenv("GITHUB_EVENT_PATH")); err != nil {
			return nil, 0, err
		}
	}
	c, err := New(getenv("GITHUB_API_URL"), repo, getenv("GITHUB_TOKEN"))
	return c, n, err
}

// ReadBody reads a comment's body from the file path, or from stdin when
// path is "-".
func ReadBody(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}
