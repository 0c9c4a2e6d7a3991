package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FromEnv takes the pull request from --pr, else from the job's event,
// and the client's settings from the environment.
func TestFromEnv(t *testing.T) {
	event := filepath.Join(t.TempDir(), "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":12}}`), 0o644)
	env := map[string]string{"GITHUB_EVENT_PATH": event, "GITHUB_API_URL": "https://ghe.example/api/v3/", "GITHUB_TOKEN": "s3cret"}
	getenv := func(k string) string { return env[k] }
	c, n, err := FromEnv(getenv, "octo/kernel", 0)
	if err != nil || n != 12 || c.BaseURL != "https://ghe.example/api/v3" || c.Token != "s3cret" || c.Repo != "octo/kernel" {
		t.Fatalf("FromEnv = %+v, %d, %v", c, n, err)
	}
	env["GITHUB_EVENT_PATH"] = ""
	if _, n, err := FromEnv(getenv, "octo/kernel", 7); err != nil || n != 7 {
		t.Errorf("--pr 7 outside a pull request's job: %d, %v", n, err)
	}
	if _, _, err := FromEnv(getenv, "octo/kernel", 0); err == nil || !strings.Contains(err.Error(), "--pr N") {
		t.Errorf("no event and no --pr: %v", err)
	}
	env["GITHUB_TOKEN"] = ""
	if _, _, err := FromEnv(getenv, "octo/kernel", 7); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("no token: %v", err)
	}
}

func TestReadBody(t *testing.T) {
	path := filepath.Join(t.TempDir(), "body.md")
	os.WriteFile(path, []byte("from the file"), 0o644)
	for in, want := range map[string]string{path: "from the file", "-": "from stdin"} {
		b, err := ReadBody(in, strings.NewReader("from stdin"))
		if err != nil || string(b) != want {
			t.Errorf("ReadBody(%s) = %q, %v; want %q", in, b, err, want)
		}
	}
	if _, err := ReadBody(path+".none", nil); err == nil {
		t.Error("a missing body read")
	}
}
