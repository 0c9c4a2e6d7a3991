package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// InDir returns s as a checkout at dir would run it: dir stands in for the
// directory of the scenario file (the same tree, checked out elsewhere, as
// a pull request's base beside its head). An exec workload's dir is taken
// from there (its dir under the file's directory, or dir itself), and so
// is its relative command, load, setup and teardown; a binary a tracer
// probes (ufunc's, Kind.Binaries) under the file's directory is taken from
// the same place under dir. env is
// added to an exec workload's environment, over what the scenario sets.
// A scenario that runs no program of its own (a built-in loop) takes
// neither, and is an error: a variant that changes nothing would make an
// A/A look like a comparison.
func InDir(s *Scenario, dir string, env map[string]string) (*Scenario, error) {
	if dir == "" && len(env) == 0 {
		return s, nil
	}
	c := *s
	c.Tracers = maps.Clone(s.Tracers)
	home := scenarioDir(s)
	changed := false
	if e, ok := s.Workload.Params.(*Exec); ok {
		ec := *e
		if dir != "" {
			ec.Dir = rebase(home, e.Dir, dir)
		}
		if len(env) > 0 {
			ec.Env = maps.Clone(e.Env)
			if ec.Env == nil {
				ec.Env = map[string]string{}
			}
			maps.Copy(ec.Env, env)
		}
		c.Workload.Params = &ec
		changed = true
	} else if len(env) > 0 {
		return nil, fmt.Errorf("env. applies to an exec workload; %s runs a %s workload", s.Name, s.Workload.Kind)
	}
	var probing []string
	for _, k := range tracers.All {
		if k.MoveBinaries == nil {
			continue
		}
		probing = append(probing, k.Name)
		if tc, ok := s.Tracers[k.Name]; ok && dir != "" {
			c.Tracers[k.Name] = k.MoveBinaries(tc, func(path string) string { return rebase(home, path, dir) })
			changed = true
		}
	}
	if !changed {
		return nil, fmt.Errorf("dir= applies to an exec workload or a %s tracer; %s has neither", strings.Join(probing, " or "), s.Name)
	}
	return &c, nil
}

// scenarioDir is the absolute directory of s's file; "" for a built-in.
func scenarioDir(s *Scenario) string {
	if s.Source == "" || strings.HasPrefix(s.Source, builtinPrefix) {
		return ""
	}
	abs, err := filepath.Abs(s.Source)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

// rebase moves path from under home to the same place under dir; a path
// outside home (or none) becomes dir itself for a directory, and stays as
// it is for a file elsewhere (an installed program).
func rebase(home, path, dir string) string {
	if path == "" {
		return dir
	}
	if home != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(home, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.Join(dir, rel)
		}
		return path
	}
	if !filepath.IsAbs(path) {
		return filepath.Join(dir, path)
	}
	return path
}

// Executables are the programs s runs and probes, as found: an exec
// workload's command, load, setup and teardown after its dir and $PATH,
// and the binaries its tracers probe (Kind.Binaries); each with its content's sha256 and, where
// its directory is a git work tree, the commit checked out there. What
// cannot be found is listed by name without a digest: the run itself says
// why it cannot start it.
func Executables(s *Scenario) []result.Executable {
	var out []result.Executable
	if e, ok := s.Workload.Params.(*Exec); ok {
		for _, c := range []struct {
			role string
			argv []string
		}{{"command", e.Command}, {"load", e.Load}, {"setup", e.Setup}, {"teardown", e.Teardown}} {
			if len(c.argv) == 0 {
				continue
			}
			x := identify(c.role, lookPath(c.argv[0], e.Dir, e.Env))
			x.GitHead, x.GitDirty = gitHead(cmpDir(e.Dir))
			out = append(out, x)
		}
	}
	for _, k := range tracers.All {
		tc, ok := s.Tracers[k.Name]
		if !ok || k.Binaries == nil {
			continue
		}
		for _, b := range k.Binaries(tc) {
			x := identify(k.Name, b)
			x.GitHead, x.GitDirty = gitHead(filepath.Dir(b))
			out = append(out, x)
		}
	}
	return out
}

func cmpDir(d string) string {
	if d == "" {
		if wd, err := os.Getwd(); err == nil {
			return wd
		}
	}
	return d
}

// lookPath finds name as exec would run it from dir: a name with a slash
// relative to dir, a bare name in $PATH (the workload's own PATH when its
// env sets one).
func lookPath(name, dir string, env map[string]string) string {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cmpDir(dir), name)
		}
		return filepath.Clean(name)
	}
	path := os.Getenv("PATH")
	if p, ok := env["PATH"]; ok {
		path = p
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	return name
}

type fileKey struct {
	path  string
	size  int64
	mtime int64
}

var digests sync.Map // fileKey → sha256 hex: a gate's every trial asks again

// identify names the file at path with its sha256 (of a regular file).
func identify(role, path string) result.Executable {
	x := result.Executable{Role: role, Path: path}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		x.Path = p
	}
	fi, err := os.Stat(x.Path)
	if err != nil || !fi.Mode().IsRegular() {
		return x
	}
	k := fileKey{x.Path, fi.Size(), fi.ModTime().UnixNano()}
	if d, ok := digests.Load(k); ok {
		x.SHA256 = d.(string)
		return x
	}
	f, err := os.Open(x.Path)
	if err != nil {
		return x
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return x
	}
	x.SHA256 = hex.EncodeToString(h.Sum(nil))
	digests.Store(k, x.SHA256)
	return x
}

var heads sync.Map // dir → [2]string{head, dirty}

// gitHead is the commit checked out in the work tree holding dir, and
// whether its tracked files differ from it; "" outside a work tree or
// without git.
func gitHead(dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	if v, ok := heads.Load(dir); ok {
		h := v.([2]string)
		return h[0], h[1] == "dirty"
	}
	head, dirty := "", ""
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "HEAD").Output(); err == nil {
		head = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			dirty = "dirty"
		}
	}
	heads.Store(dir, [2]string{head, dirty})
	return head, dirty == "dirty"
}
