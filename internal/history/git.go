package history

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

	mu    sync.Mutex
	batch *catFile // started by the first read
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
	g.borrow(ctx, tmp)
	return tmp, nil
}

// borrow lets the private repository tmp read the objects of a store
// that is a repository on this machine (git's alternates), so that a
// fetch copies none of the records it has: a long history's records are
// gigabytes, and a reader needs the index and the summaries. A store
// elsewhere (a URL) is fetched as before.
func (g *gitStore) borrow(ctx context.Context, tmp string) {
	remote := g.remote()
	if !filepath.IsAbs(remote) {
		return
	}
	out, err := g.git(ctx, remote, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return // not a repository (yet): the fetch will say so
	}
	objects := strings.TrimSpace(string(out))
	if st, err := os.Stat(objects); err != nil || !st.IsDir() || strings.ContainsAny(objects, "\n\r") {
		return
	}
	os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644)
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
		sn := &gitSnapshot{g: g, tmp: tmp, commit: tip}
		ch, err := fn(sn)
		sn.close()
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
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return nil, fmt.Errorf("%q: %w: a path outside the store", name, ErrCorrupt)
	}
	if s.commit == "" {
		return nil, fs.ErrNotExist
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.batch == nil {
		b, err := startCatFile(s.tmp)
		if err != nil {
			return nil, err
		}
		s.batch = b
	}
	return s.batch.read(s.commit + ":" + name)
}

// catFile is one git cat-file --batch process: a store's reader asks it
// for every file of a snapshot, rather than starting a git per record.
type catFile struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

func startCatFile(dir string) (*catFile, error) {
	c := &catFile{cmd: exec.Command("git", "cat-file", "--batch")}
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	c.cmd.Stderr = &c.stderr
	in, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, &gitError{args: []string{"cat-file", "--batch"}, err: err}
	}
	c.in, c.out = in, bufio.NewReaderSize(out, 1<<16)
	return c, nil
}

func (c *catFile) fail(err error) error {
	return &gitError{args: []string{"cat-file", "--batch"}, msg: strings.TrimSpace(c.stderr.String()), err: err}
}

// read returns the blob rev names ("COMMIT:PATH"); a missing path is
// fs.ErrNotExist.
func (c *catFile) read(rev string) ([]byte, error) {
	if strings.ContainsAny(rev, "\n\r") {
		return nil, fmt.Errorf("%q: %w", rev, fs.ErrNotExist)
	}
	if _, err := io.WriteString(c.in, rev+"\n"); err != nil {
		return nil, c.fail(err)
	}
	hdr, err := c.out.ReadString('\n')
	if err != nil {
		return nil, c.fail(err)
	}
	f := strings.Fields(hdr)
	// "OID TYPE SIZE", or "REV missing" (also "REV ambiguous").
	if len(f) != 3 || f[2] == "missing" || f[2] == "ambiguous" {
		_, name, _ := strings.Cut(rev, ":")
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return nil, c.fail(fmt.Errorf("bad header %q", strings.TrimSpace(hdr)))
	}
	b := make([]byte, size+1) // and the newline after the content
	if _, err := io.ReadFull(c.out, b); err != nil {
		return nil, c.fail(err)
	}
	if f[1] != "blob" {
		_, name, _ := strings.Cut(rev, ":")
		return nil, fmt.Errorf("%s: %w: a %s, not a file", name, ErrCorrupt, f[1])
	}
	return b[:size], nil
}

func (c *catFile) close() error {
	c.in.Close()
	return c.cmd.Wait()
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

func (s *gitSnapshot) sizes(dir string) (map[string]int64, error) {
	out := map[string]int64{}
	if s.commit == "" {
		return out, nil
	}
	// -l: "MODE TYPE OBJECT SIZE\tNAME", NUL-terminated.
	b, err := s.g.git(context.Background(), s.tmp, nil, nil, "ls-tree", "-r", "-l", "-z", s.commit, "--", dir)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\x00") {
		meta, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		out[name] = n
	}
	return out, nil
}

func (s *gitSnapshot) close() error {
	s.mu.Lock()
	if s.batch != nil {
		s.batch.close()
		s.batch = nil
	}
	s.mu.Unlock()
	// An update's snapshots share its repository, which it removes.
	if !s.owned {
		return nil
	}
	return os.RemoveAll(s.tmp)
}
