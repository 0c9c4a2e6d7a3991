package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// ErrGit is a git command that failed for a reason other than a lost race:
// the repository unreachable, a push refused by permissions.
var ErrGit = errors.New("git failed")

// maxAttempts bounds how often an update is redone on a new tip before
// giving up: each retry means another writer landed, so this many is a
// storm, not bad luck.
const maxAttempts = 50

// lostRaces counts pushes rejected because another writer landed first:
// the tests see that their writers really raced.
var lostRaces atomic.Int64

// gitStore is a store on a branch of a git repository. It works in a
// private bare repository: the branch's tip is fetched (depth 1), the
// change is written as a commit on it with git's plumbing (no work tree,
// no checkout of the records), and pushed without force. A push that
// loses the race is rejected as non-fast-forward; the change is then
// computed again on the new tip.
type gitStore struct {
	repo, branch string
}

// gitSnapshot reads the tree of one commit of the private repository.
type gitSnapshot struct {
	g      *gitStore
	tmp    string // the private bare repository
	commit string // "" for a branch that does not exist yet
	owned  bool   // close removes tmp
}

func (g *gitStore) remote() string {
	// A relative path is the caller's, not the private repository's.
	if strings.Contains(g.repo, "://") || strings.Contains(g.repo, "@") {
		return g.repo
	}
	if abs, err := filepath.Abs(g.repo); err == nil {
		return abs
	}
	return g.repo
}

func (g *gitStore) git(ctx context.Context, dir string, stdin []byte, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg) > 400 {
			msg = msg[i+1:]
		}
		return stdout.Bytes(), &gitError{args: args, msg: msg, err: err}
	}
	return stdout.Bytes(), nil
}

type gitError struct {
	args []string
	msg  string
	err  error
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", e.args[0], e.err, e.msg)
}

func (e *gitError) Unwrap() error { return ErrGit }

// remoteTip returns the branch's commit in the repository, "" when the
// branch does not exist.
func (g *gitStore) remoteTip(ctx context.Context, tmp string) (string, error) {
	out, err := g.git(ctx, tmp, nil, nil, "ls-remote", "--", g.remote(), "refs/heads/"+g.branch)
	if err != nil {
		return "", fmt.Errorf("history store git:%s#%s: %w", g.repo, g.branch, err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", nil
	}
	return f[0], nil
}

// fetch brings the branch's tip into tmp and returns its commit.
func (g *gitStore) fetch(ctx context.Context, tmp string) (string, error) {
	tip, err := g.remoteTip(ctx, tmp)
	if err != nil || tip == "" {
		return "", err
	}
	if _, err := g.git(ctx, tmp, nil, nil, "fetch", "--quiet", "--no-tags", "--depth=1", "--", g.remote(), "+refs/heads/"+g.branch+":refs/tip"); err != nil {
		return "", fmt.Errorf("history store git:%s#%s: %w", g.repo, g.branch, err)
	}
	out, err := g.git(ctx, tmp, nil, nil, "rev-parse", "--verify", "refs/tip^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (g *gitStore) private(ctx context.Context) (string, error) {
	tmp, err := os.MkdirTemp("", "tailgate-history-")
	if err != nil {
		return "", err
	}
	if _, err := g.git(ctx, tmp, nil, nil, "init", "--quiet", "--bare", "."); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

func (g *gitStore) snapshot(ctx context.Context) (snapshot, error) {
	tmp, err := g.private(ctx)
	if err != nil {
		return nil, err
	}
	tip, err := g.fetch(ctx, tmp)
	if err == nil && tip == "" {
		err = fmt.Errorf("history store git:%s: %w: no branch %s (the first history add creates it)", g.repo, fs.ErrNotExist, g.branch)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &gitSnapshot{g: g, tmp: tmp, commit: tip, owned: true}, nil
}

// identity is the committer git uses when the environment and the
// configuration name none (a fresh CI runner).
var identity = []string{"GIT_AUTHOR_NAME=tailgate", "GIT_AUTHOR_EMAIL=tailgate@localhost", "GIT_COMMITTER_NAME=tailgate", "GIT_COMMITTER_EMAIL=tailgate@localhost"}

func (g *gitStore) update(ctx context.Context, msg string, fn func(snapshot) (*change, error)) error {
	tmp, err := g.private(ctx)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var env []string
	if out, _ := g.git(ctx, tmp, nil, nil, "config", "user.email"); len(bytes.TrimSpace(out)) == 0 && os.Getenv("GIT_COMMITTER_EMAIL") == "" {
		env = identity
	}
	for attempt := 1; ; attempt++ {
		tip, err := g.fetch(ctx, tmp)
		if err != nil {
			return err
		}
		ch, err := fn(&gitSnapshot{g: g, tmp: tmp, commit: tip})
		if err != nil || ch == nil {
			return err
		}
		commit, err := g.commit(ctx, tmp, tip, ch, msg, env)
		if err != nil {
			return err
		}
		_, perr := g.git(ctx, tmp, nil, nil, "push", "--quiet", "--", g.remote(), commit+":refs/heads/"+g.branch)
		if perr == nil {
			return nil
		}
		// Lost the race, or broken? Only a tip that moved is a race.
		now, err := g.remoteTip(ctx, tmp)
		if err != nil {
			return err
		}
		if now == tip || attempt >= maxAttempts {
			if now != tip {
				return fmt.Errorf("history store git:%s#%s: %d pushes lost to other writers; try again: %w", g.repo, g.branch, attempt, perr)
			}
			return fmt.Errorf("history store git:%s#%s: push: %w", g.repo, g.branch, perr)
		}
		lostRaces.Add(1)
		// Back off a little, at random, so that racing writers spread out.
		d := time.Duration(rand.Int64N(int64(20*time.Millisecond) * int64(min(attempt, 10))))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// commit writes ch as a commit on tip ("" for a first, parentless one)
// and returns it. The tree is built in a private index file, so no work
// tree is checked out.
func (g *gitStore) commit(ctx context.Context, tmp, tip string, ch *change, msg string, env []string) (string, error) {
	idx := filepath.Join(tmp, "tailgate-index")
	os.Remove(idx)
	ienv := append([]string{"GIT_INDEX_FILE=" + idx}, env...)
	if tip != "" {
		if _, err := g.git(ctx, tmp, nil, ienv, "read-tree", tip); err != nil {
			return "", err
		}
	} else if _, err := g.git(ctx, tmp, nil, ienv, "read-tree", "--empty"); err != nil {
		return "", err
	}
	var info strings.Builder
	for name, b := range ch.put {
		out, err := g.git(ctx, tmp, b, nil, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "100644 %s\t%s\n", strings.TrimSpace(string(out)), name)
	}
	for _, name := range ch.del {
		// Mode 0 removes the path (git update-index --index-info).
		fmt.Fprintf(&info, "0 0000000000000000000000000000000000000000\t%s\n", name)
	}
	if _, err := g.git(ctx, tmp, []byte(info.String()), ienv, "update-index", "--index-info"); err != nil {
		return "", err
	}
	out, err := g.git(ctx, tmp, nil, ienv, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(string(out)), "-m", msg}
	if tip != "" {
		args = append(args, "-p", tip)
	}
	out, err = g.git(ctx, tmp, nil, env, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (s *gitSnapshot) read(name string) ([]byte, error) {
	if s.commit == "" {
		return nil, fs.ErrNotExist
	}
	out, err := s.g.git(context.Background(), s.tmp, nil, nil, "cat-file", "blob", s.commit+":"+name)
	var ge *gitError
	if errors.As(err, &ge) {
		// cat-file says "Not a valid object name" of a missing path too.
		if o, lerr := s.g.git(context.Background(), s.tmp, nil, nil, "ls-tree", "--name-only", s.commit, "--", name); lerr == nil && len(bytes.TrimSpace(o)) == 0 {
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		}
	}
	return out, err
}

func (s *gitSnapshot) list(dir string) ([]string, error) {
	if s.commit == "" {
		return nil, nil
	}
	out, err := s.g.git(context.Background(), s.tmp, nil, nil, "ls-tree", "-r", "--name-only", "-z", s.commit, "--", dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(string(out), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

func (s *gitSnapshot) close() error {
	// An update's snapshots share its repository, which it removes.
	if !s.owned {
		return nil
	}
	return os.RemoveAll(s.tmp)
}
