// Package githubtest is a stand-in for the GitHub issues-comments API, the
// token's own account (GET /user), the workflow runs, artifacts and pull
// requests that the example workflows look up, and release downloads, on
// 127.0.0.1, for tests of the client, the command, the action and the
// workflows' scripts.
package githubtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server serves the comments of one repository's issues.
type Server struct {
	*httptest.Server
	Repo  string
	Token string
	// PageSize caps comments per page whatever per_page asks, so that a
	// test can make pagination happen with a few comments.
	PageSize int
	// Self is whom the token acts as: the author of the comments it
	// creates and of those Seed adds. A token starting "ghs_" is an
	// installation token, as a workflow's GITHUB_TOKEN is: GET /user
	// refuses it (403) and Self is ActionsBot; any other is a user's.
	Self User

	mu       sync.Mutex
	comments map[int][]Comment
	nextID   int64
	requests []string
	fail     map[string]failure
	assets   map[string][]byte // "OWNER/NAME/TAG/FILE" → content
	runs     []Run
	pulls    []PullRequest
}

// Repository is a repository as runs, artifacts and pull requests name it.
type Repository struct {
	ID       int64  `json:"id"`
	FullName string `json:"full_name"`
	Owner    struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// Repo returns the repository fullName with id.
func Repo(id int64, fullName string) Repository {
	r := Repository{ID: id, FullName: fullName}
	r.Owner.Login, _, _ = strings.Cut(fullName, "/")
	return r
}

// Run is a workflow run. Workflow is its file's name, e.g. latency-gate.yml.
type Run struct {
	ID             int64      `json:"id"`
	Workflow       string     `json:"-"`
	Event          string     `json:"event"`
	HeadBranch     string     `json:"head_branch"`
	HeadSHA        string     `json:"head_sha"`
	Conclusion     string     `json:"conclusion"`
	Repository     Repository `json:"repository"`
	HeadRepository Repository `json:"head_repository"`
	Artifacts      []Artifact `json:"-"`
}

// Artifact is an artifact of a run; its WorkflowRun is filled in from the
// run unless set.
type Artifact struct {
	ID          int64       `json:"id"`
	Name        string      `json:"name"`
	Expired     bool        `json:"expired"`
	WorkflowRun ArtifactRun `json:"workflow_run"`
	// Zip is what its download serves, through a redirect to storage
	// that takes no token, as GitHub's does.
	Zip []byte `json:"-"`
}

// ArtifactRun is the run that made an artifact, as the artifacts API says.
type ArtifactRun struct {
	ID               int64  `json:"id"`
	RepositoryID     int64  `json:"repository_id"`
	HeadRepositoryID int64  `json:"head_repository_id"`
	HeadBranch       string `json:"head_branch"`
	HeadSHA          string `json:"head_sha"`
}

// PullRequest is a pull request.
type PullRequest struct {
	Number int    `json:"number"`
	State  string `json:"state"`
	Head   Branch `json:"head"`
	Base   Branch `json:"base"`
}

// Branch is one side of a pull request.
type Branch struct {
	Ref  string      `json:"ref"`
	SHA  string      `json:"sha"`
	Repo *Repository `json:"repo"`
}

// AddRun adds a workflow run; runs are listed newest (highest ID) first.
func (s *Server) AddRun(r Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range r.Artifacts {
		if r.Artifacts[i].WorkflowRun == (ArtifactRun{}) {
			r.Artifacts[i].WorkflowRun = ArtifactRun{ID: r.ID, RepositoryID: r.Repository.ID, HeadRepositoryID: r.HeadRepository.ID, HeadBranch: r.HeadBranch, HeadSHA: r.HeadSHA}
		}
	}
	s.runs = append(s.runs, r)
	slices.SortFunc(s.runs, func(a, b Run) int { return cmp.Compare(b.ID, a.ID) })
}

// artifact is the artifact id of any run; nil for none. s.mu is held.
func (s *Server) artifact(id int64) *Artifact {
	for i := range s.runs {
		for j := range s.runs[i].Artifacts {
			if s.runs[i].Artifacts[j].ID == id {
				return &s.runs[i].Artifacts[j]
			}
		}
	}
	return nil
}

// AddPull adds a pull request.
func (s *Server) AddPull(p PullRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls = append(s.pulls, p)
}

// Comment is a stored comment.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	URL  string `json:"html_url"`
	User User   `json:"user"`
}

// User is an account.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

// ActionsBot is the account a workflow's GITHUB_TOKEN writes as, with its
// github.com ID.
var ActionsBot = User{Login: "github-actions[bot]", ID: 41898282, Type: "Bot"}

// Tester is the account a user's token of New acts as.
var Tester = User{Login: "tailgate-tester", ID: 5001, Type: "User"}

type failure struct {
	status int
	msg    string
}

var (
	assetPath = regexp.MustCompile(`^/([^/]+/[^/]+)/releases/download/([^/]+)/([^/]+)$`)
	listPath  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$`)
	patchPath = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$`)
	runsPath  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/actions/workflows/([^/]+)/runs$`)
	artsPath  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts$`)
	pullsPath = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/pulls$`)
	zipPath   = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip$`)
	blobPath  = regexp.MustCompile(`^/storage/artifact-(\d+)\.zip$`)
)

// New starts a server for repo that accepts token; it stops when the test
// ends.
func New(t testing.TB, repo, token string) *Server {
	s := &Server{Repo: repo, Token: token, PageSize: 100, Self: Tester, comments: map[int][]Comment{}, nextID: 1000, fail: map[string]failure{}, assets: map[string][]byte{}}
	if s.installation() {
		s.Self = ActionsBot
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Seed adds comments with the given bodies to issue number, written by
// Self.
func (s *Server) Seed(number int, bodies ...string) {
	s.SeedBy(number, s.Self, bodies...)
}

// SeedBy adds comments with the given bodies to issue number, written by
// author.
func (s *Server) SeedBy(number int, author User, bodies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range bodies {
		s.add(number, author, b)
	}
}

// installation reports whether the token is an installation token.
func (s *Server) installation() bool { return strings.HasPrefix(s.Token, "ghs_") }

// Fail makes requests of method answer status with message.
func (s *Server) Fail(method string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = failure{status, message}
}

// Release publishes files as the assets of release tag of repo, served
// where GitHub serves them to anyone, at
// SERVER/OWNER/NAME/releases/download/TAG/FILE.
func (s *Server) Release(repo, tag string, files map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, b := range files {
		s.assets[repo+"/"+tag+"/"+name] = b
	}
}

// Comments returns issue number's comments.
func (s *Server) Comments(number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Comment(nil), s.comments[number]...)
}

// Requests returns "METHOD path?query" of every request so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) add(number int, author User, body string) Comment {
	s.nextID++
	c := Comment{ID: s.nextID, Body: body, URL: fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", s.URL, s.Repo, number, s.nextID), User: author}
	s.comments[number] = append(s.comments[number], c)
	return c
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	if s.serveDownload(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, v any) {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		reply(http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	if f, ok := s.fail[r.Method]; ok {
		reply(f.status, map[string]string{"message": f.msg})
		return
	}
	if r.URL.Path == "/user" && r.Method == http.MethodGet {
		if s.installation() {
			reply(http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
		} else {
			reply(http.StatusOK, s.Self)
		}
		return
	}
	if r.Method == http.MethodGet {
		if m := zipPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo {
			id, _ := strconv.ParseInt(m[2], 10, 64)
			if a := s.artifact(id); a != nil && !a.Expired {
				http.Redirect(w, r, "/storage/artifact-"+m[2]+".zip", http.StatusFound)
				return
			}
			reply(http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		if s.serveActions(r, reply) {
			return
		}
	}
	var body struct {
		Body *string `json:"body"`
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPatch {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Body == nil {
			reply(http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
			return
		}
	}
	if m := listPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo {
		n, _ := strconv.Atoi(m[2])
		switch r.Method {
		case http.MethodGet:
			s.list(w, r, n)
		case http.MethodPost:
			reply(http.StatusCreated, s.add(n, s.Self, *body.Body))
		default:
			reply(http.StatusMethodNotAllowed, map[string]string{"message": "method not allowed"})
		}
		return
	}
	if m := patchPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo && r.Method == http.MethodPatch {
		id, _ := strconv.ParseInt(m[2], 10, 64)
		for n, cs := range s.comments {
			for i := range cs {
				if cs[i].ID == id {
					cs[i].Body = *body.Body
					s.comments[n] = cs
					reply(http.StatusOK, cs[i])
					return
				}
			}
		}
	}
	reply(http.StatusNotFound, map[string]string{"message": "Not Found"})
}

// serveDownload answers the GETs that need no token, a public
// repository's release assets and an artifact's zip behind its redirect,
// and reports whether the path was one of them.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) bool {
	if m := assetPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
		// A public repository's release assets need no token.
		b, ok := s.assets[m[1]+"/"+m[2]+"/"+m[3]]
		if !ok {
			http.Error(w, "Not Found", http.StatusNotFound)
			return true
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
		return true
	}
	if m := blobPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if a := s.artifact(id); a != nil && a.Zip != nil {
			w.Header().Set("Content-Type", "application/zip")
			w.Write(a.Zip)
			return true
		}
		http.Error(w, "Not Found", http.StatusNotFound)
		return true
	}
	return false
}

// serveActions answers the GETs of runs, artifacts and pull requests,
// filtered by the query parameters GitHub honours, and reports whether
// the path was one of them.
func (s *Server) serveActions(r *http.Request, reply func(int, any)) bool {
	q := r.URL.Query()
	per := 30
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	match := func(param, v string) bool { return q.Get(param) == "" || q.Get(param) == v }
	if m := runsPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo {
		runs := []Run{}
		for _, run := range s.runs {
			if run.Workflow == m[2] && match("branch", run.HeadBranch) && match("event", run.Event) && match("status", run.Conclusion) && len(runs) < per {
				runs = append(runs, run)
			}
		}
		reply(http.StatusOK, map[string]any{"total_count": len(runs), "workflow_runs": runs})
		return true
	}
	if m := artsPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo {
		id, _ := strconv.ParseInt(m[2], 10, 64)
		arts := []Artifact{}
		for _, run := range s.runs {
			if run.ID != id {
				continue
			}
			for _, a := range run.Artifacts {
				if match("name", a.Name) {
					arts = append(arts, a)
				}
			}
		}
		reply(http.StatusOK, map[string]any{"total_count": len(arts), "artifacts": arts})
		return true
	}
	if m := pullsPath.FindStringSubmatch(r.URL.Path); m != nil && m[1] == s.Repo {
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		prs := []PullRequest{}
		for _, p := range s.pulls {
			// head=OWNER:BRANCH, as GitHub filters it.
			owner, branch, _ := strings.Cut(q.Get("head"), ":")
			if (state != "all" && p.State != state) || (q.Get("head") != "" && (p.Head.Repo == nil || p.Head.Repo.Owner.Login != owner || p.Head.Ref != branch)) {
				continue
			}
			prs = append(prs, p)
		}
		reply(http.StatusOK, prs)
		return true
	}
	return false
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, n int) {
	per := 30
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	per = min(per, s.PageSize)
	page := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	cs := s.comments[n]
	lo := min((page-1)*per, len(cs))
	hi := min(lo+per, len(cs))
	if hi < len(cs) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="next", <%s%s?per_page=%d&page=%d>; rel="last"`,
			s.URL, r.URL.Path, per, page+1, s.URL, r.URL.Path, per, (len(cs)+per-1)/per))
	}
	w.WriteHeader(http.StatusOK)
	out := cs[lo:hi]
	if out == nil {
		out = []Comment{}
	}
	json.NewEncoder(w).Encode(out)
}
