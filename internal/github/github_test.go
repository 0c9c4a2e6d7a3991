package github

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/github/githubtest"
)

func TestUpsert(t *testing.T) {
	ctx := context.Background()
	srv := githubtest.New(t, "o/r", "tok")
	srv.PageSize = 2
	// The marked comment sits on the third page: found only by following
	// the Link headers.
	srv.Seed(7, "lgtm", "nit", "ci?", "hmm", DefaultMarker+"\nold report", "later")
	c, err := New(srv.URL, "o/r", "tok")
	if err != nil {
		t.Fatal(err)
	}
	got, created, err := c.Upsert(ctx, 7, "", "new report")
	if err != nil || created {
		t.Fatalf("created %v, err %v", created, err)
	}
	cs := srv.Comments(7)
	if len(cs) != 6 || cs[4].Body != DefaultMarker+"\nnew report" || got.ID != cs[4].ID {
		t.Errorf("comments after update: %+v", cs)
	}
	var gets int
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r, "GET /repos/o/r/issues/7/comments") {
			gets++
		}
	}
	if gets != 3 {
		t.Errorf("%d pages read, want 3: %v", gets, srv.Requests())
	}

	// No marked comment yet: created once, then updated.
	for i, want := range []bool{true, false, false} {
		_, created, err := c.Upsert(ctx, 8, "<!-- custom -->", fmt.Sprintf("run %d", i))
		if err != nil || created != want {
			t.Fatalf("upsert %d: created %v, err %v", i, created, err)
		}
	}
	if cs := srv.Comments(8); len(cs) != 1 || cs[0].Body != "<!-- custom -->\nrun 2" {
		t.Errorf("comments: %+v", cs)
	}
}

// TestUpsertMarkerHijack: anyone can write the hidden marker into a
// comment of theirs, first in the thread. The updater edits only what the
// token's own account wrote, for a user's token (GET /user) and for a
// workflow's GITHUB_TOKEN (refused at GET /user, writes as
// github-actions[bot]), and otherwise creates its own comment.
func TestUpsertMarkerHijack(t *testing.T) {
	ctx := context.Background()
	mallory := githubtest.User{Login: "mallory", ID: 666, Type: "User"}
	for _, c := range []struct {
		name, token string
		self        githubtest.User
	}{
		{"personal access token", "ghp_tok", githubtest.Tester},
		{"GITHUB_TOKEN", "ghs_tok", githubtest.ActionsBot},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := githubtest.New(t, "o/r", c.token)
			planted := DefaultMarker + "\n✅ tailgate: no regressions"
			srv.SeedBy(7, mallory, planted)
			gh, err := New(srv.URL, "o/r", c.token)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []bool{true, false} {
				_, created, err := gh.Upsert(ctx, 7, "", fmt.Sprintf("report %d", i))
				if err != nil || created != want {
					t.Fatalf("upsert %d: created %v (want %v), err %v", i, created, want, err)
				}
			}
			cs := srv.Comments(7)
			if len(cs) != 2 || cs[0].Body != planted || cs[0].User != mallory {
				t.Fatalf("the planted comment was edited: %+v", cs)
			}
			if cs[1].User != c.self || cs[1].Body != DefaultMarker+"\nreport 1" {
				t.Errorf("own comment: %+v", cs[1])
			}
			if !slices.Contains(srv.Requests(), "GET /user") {
				t.Errorf("never asked whom the token acts as: %v", srv.Requests())
			}
		})
	}
	// Where the token has an ID, the ID decides, not the login.
	t.Run("another account with the same login", func(t *testing.T) {
		srv := githubtest.New(t, "o/r", "ghp_tok")
		srv.SeedBy(7, githubtest.User{Login: githubtest.Tester.Login, ID: 999, Type: "User"}, DefaultMarker+"\nold")
		gh, _ := New(srv.URL, "o/r", "ghp_tok")
		if _, created, err := gh.Upsert(ctx, 7, "", "new"); err != nil || !created {
			t.Errorf("created %v, err %v: matched an author by login where the ID differs", created, err)
		}
	})
	t.Run("GET /user fails otherwise: no edit, an error", func(t *testing.T) {
		srv := githubtest.New(t, "o/r", "ghp_tok")
		srv.Seed(7, DefaultMarker+"\nold")
		srv.Fail("GET", 500, "boom")
		gh, _ := New(srv.URL, "o/r", "ghp_tok")
		_, _, err := gh.Upsert(ctx, 7, "", "new")
		if err == nil {
			t.Fatal("no error")
		}
		if cs := srv.Comments(7); len(cs) != 1 || cs[0].Body != DefaultMarker+"\nold" {
			t.Errorf("comments: %+v", cs)
		}
	})
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	srv := githubtest.New(t, "o/r", "tok")
	c, _ := New(srv.URL, "o/r", "tok")
	srv.Fail("POST", 403, "Resource not accessible by integration")
	_, _, err := c.Upsert(ctx, 1, "", "x")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 403 || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "POST /repos/o/r/issues/1/comments: 403 Forbidden: Resource not accessible by integration") {
		t.Errorf("err = %v", err)
	}
	bad, _ := New(srv.URL, "o/r", "wrong")
	if _, err := bad.Comments(ctx, 1); !errors.As(err, &ae) || ae.Status != 401 {
		t.Errorf("bad token: %v", err)
	}
	for _, c := range []struct{ url, repo, token, want string }{
		{"ftp://x", "o/r", "t", "API URL"},
		{"", "o", "t", "owner/name"},
		{"", "o/r", "", "GITHUB_TOKEN"},
	} {
		if _, err := New(c.url, c.repo, c.token); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q, %q) = %v, want %q", c.url, c.repo, c.token, err, c.want)
		}
	}
	// A Link header off the API host is not followed with the token.
	if _, err := c.nextPage(`<https://elsewhere.example/x?page=2>; rel="next"`); err == nil {
		t.Error("followed a link off the API host")
	}
}

func TestPullRequestNumber(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	if n, err := PullRequestNumber(write("pr.json", `{"action":"synchronize","number":42,"pull_request":{"number":42}}`)); n != 42 || err != nil {
		t.Errorf("got %d, %v", n, err)
	}
	for _, c := range []struct{ path, want string }{
		{"", "GITHUB_EVENT_PATH"},
		{write("push.json", `{"ref":"refs/heads/main"}`), "not triggered by a pull request"},
		{write("bad.json", `{`), "bad.json"},
		{filepath.Join(dir, "none.json"), "none.json"},
	} {
		if _, err := PullRequestNumber(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}
