// Package github is the little of the GitHub REST API that the gate needs
// on a pull request: one comment, found again by a hidden marker and
// updated in place, so that a pull request pushed ten times carries one
// report, not ten.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultAPIURL is the API of github.com; Actions sets GITHUB_API_URL to
// the right one on GitHub Enterprise Server.
const DefaultAPIURL = "https://api.github.com"

// DefaultMarker is the hidden HTML comment that marks tailgate's report
// comment.
const DefaultMarker = "<!-- tailgate-report -->"

// maxPages bounds the comment listing: 100 comments a page, so 100 pages
// is 10,000 comments, past any real pull request.
const maxPages = 100

// Client talks to one repository's issues API.
type Client struct {
	BaseURL string // e.g. https://api.github.com, from GITHUB_API_URL
	Repo    string // owner/name, from GITHUB_REPOSITORY
	Token   string // GITHUB_TOKEN
	HTTP    *http.Client
}

// Comment is an issue or pull-request comment.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	URL  string `json:"html_url"`
	User User   `json:"user"`
}

// User is the account that wrote a comment, or that a token acts as.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"` // User or Bot
}

// ActionsBot is whom a workflow's GITHUB_TOKEN comments as. Its ID differs
// between github.com and each GitHub Enterprise Server, so it is known by
// its login alone; "[bot]" logins belong to GitHub Apps, which no user can
// register.
var ActionsBot = User{Login: "github-actions[bot]", Type: "Bot"}

// wrote reports whether u is the author of c: by ID where u has one, else
// by login.
func (u User) wrote(c Comment) bool {
	if u.ID != 0 {
		return c.User.ID == u.ID
	}
	return u.Login != "" && strings.EqualFold(c.User.Login, u.Login)
}

// APIError is a response the API answered with a non-2xx status.
type APIError struct {
	Method string
	Path   string
	Status int
	// Message is the API's own message, when it sent one.
	Message string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
		s += " (does the token have pull-requests: write? on a fork's pull request GITHUB_TOKEN is read-only)"
	}
	return s
}

// New checks the settings and returns a client.
func New(baseURL, repo, token string) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("API URL %q: want http(s)://host[/path]", baseURL)
	}
	if owner, name, ok := strings.Cut(repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("repository %q: want owner/name (GITHUB_REPOSITORY)", repo)
	}
	if token == "" {
		return nil, errors.New("no token: set GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})")
	}
	return &Client{
		BaseURL: strings.TrimSuffix(baseURL, "/"),
		Repo:    repo,
		Token:   token,
		HTTP:    &http.Client{Timeout: 30 * time.Second},
	}, nil
}

// PullRequestNumber reads the pull request's number from the event payload
// that Actions writes to GITHUB_EVENT_PATH.
func PullRequestNumber(eventPath string) (int, error) {
	if eventPath == "" {
		return 0, errors.New("GITHUB_EVENT_PATH is not set: not in a GitHub Actions job? pass --pr N")
	}
	b, err := os.ReadFile(eventPath)
	if err != nil {
		return 0, fmt.Errorf("event payload: %w", err)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return 0, fmt.Errorf("event payload %s: %w", eventPath, err)
	}
	if ev.PullRequest == nil || ev.PullRequest.Number <= 0 {
		return 0, fmt.Errorf("event payload %s has no pull_request.number: the workflow was not triggered by a pull request", eventPath)
	}
	return ev.PullRequest.Number, nil
}

// Comments lists every comment of issue or pull request n, following the
// pages the API links to.
func (c *Client) Comments(ctx context.Context, n int) ([]Comment, error) {
	next := fmt.Sprintf("%s/repos/%s/issues/%d/comments?per_page=100", c.BaseURL, c.Repo, n)
	var all []Comment
	for page := 0; next != ""; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("list comments of #%d: more than %d pages", n, maxPages)
		}
		var cs []Comment
		resp, err := c.do(ctx, http.MethodGet, next, nil, &cs)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
		if next, err = c.nextPage(resp.Header.Get("Link")); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// nextPage returns the rel="next" URL of a Link header, or "". The token
// goes with the request, so a link off the API's own host is refused.
func (c *Client) nextPage(link string) (string, error) {
	for part := range strings.SplitSeq(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		isNext := false
		for p := range strings.SplitSeq(params, ";") {
			if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); k == "rel" && slices.Contains(strings.Fields(strings.Trim(v, `"`)), "next") {
				isNext = true
			}
		}
		if !isNext {
			continue
		}
		u, err := url.Parse(target[1 : len(target)-1])
		if err != nil {
			return "", fmt.Errorf("Link header: %w", err)
		}
		base, _ := url.Parse(c.BaseURL)
		if u.Scheme != base.Scheme || u.Host != base.Host {
			return "", fmt.Errorf("Link header points off the API (%s): not followed", u.Redacted())
		}
		return u.String(), nil
	}
	return "", nil
}

// Self returns the account the token acts as. A user's token (a personal
// access token) answers GET /user; an installation token such as a
// workflow's GITHUB_TOKEN is refused there with 403, and comments as
// ActionsBot.
func (c *Client) Self(ctx context.Context) (User, error) {
	var u User
	_, err := c.do(ctx, http.MethodGet, c.BaseURL+"/user", nil, &u)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
		return ActionsBot, nil
	}
	if err != nil {
		return User{}, fmt.Errorf("whom the token acts as: %w", err)
	}
	if u.ID == 0 && u.Login == "" {
		return User{}, fmt.Errorf("whom the token acts as: GET /user named nobody")
	}
	return u, nil
}

// Upsert makes body, marked with marker, the one marked comment of issue
// or pull request n: the first comment carrying the marker that the
// token's own account wrote is updated, and one is created when there is
// none. A marked comment by anyone else is left alone: the marker is
// public, and anyone can write it into a comment of theirs. It reports
// whether it created.
func (c *Client) Upsert(ctx context.Context, n int, marker, body string) (Comment, bool, error) {
	if marker == "" {
		marker = DefaultMarker
	}
	if !strings.Contains(body, marker) {
		body = marker + "\n" + body
	}
	cs, err := c.Comments(ctx, n)
	if err != nil {
		return Comment{}, false, err
	}
	payload := map[string]string{"body": body}
	var out Comment
	var self *User // asked for only when a marked comment is found
	for _, cm := range cs {
		if !strings.Contains(cm.Body, marker) {
			continue
		}
		if self == nil {
			u, err := c.Self(ctx)
			if err != nil {
				return Comment{}, false, err
			}
			self = &u
		}
		if self.wrote(cm) {
			u := fmt.Sprintf("%s/repos/%s/issues/comments/%d", c.BaseURL, c.Repo, cm.ID)
			_, err := c.do(ctx, http.MethodPatch, u, payload, &out)
			return out, false, err
		}
	}
	u := fmt.Sprintf("%s/repos/%s/issues/%d/comments", c.BaseURL, c.Repo, n)
	_, err = c.do(ctx, http.MethodPost, u, payload, &out)
	return out, true, err
}

// do sends one request and decodes a 2xx JSON answer into out.
func (c *Client) do(ctx context.Context, method, u string, in, out any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("User-Agent", "tailgate")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// url.Error repeats the whole URL; the path is enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %w", method, pathOf(u), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, pathOf(u), err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Method: method, Path: pathOf(u), Status: resp.StatusCode}
		var msg struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &msg) == nil {
			e.Message = msg.Message
		}
		return nil, e
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, fmt.Errorf("%s %s: answer is not the JSON expected: %w", method, pathOf(u), err)
		}
	}
	return resp, nil
}

// pathOf is a URL's path for messages: short, and without query tokens.
func pathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Path
}
