package bisect

import (
	"context"
	"fmt"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// BuildError is a commit whose build command failed: the bisect skips it
// (git bisect's 125), as a commit that cannot be measured.
type BuildError struct {
	Commit string
	Err    error
	Log    string   // the build's output
	Tail   []string // its last lines
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build of %s: %v (its output: %s)", Short(e.Commit), e.Err, e.Log)
}

func (e *BuildError) Unwrap() error { return e.Err }

// withoutGitDirs is the environment without the variables that point git
// at a repository other than the directory it runs in.
func withoutGitDirs() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// build runs the shell command cmdline in dir, a worktree at commit,
// with TAILGATE_COMMIT set and its output in logPath. A command that
// fails is a *BuildError; an interrupt is the context's error.
func build(ctx context.Context, cmdline, dir, commit, logPath string) error {
	f, err := safefile.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var tail tailBuffer
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(withoutGitDirs(), "TAILGATE_COMMIT="+commit)
	cmd.Stdout = io.MultiWriter(f, &tail)
	cmd.Stderr = cmd.Stdout
	signalGroup(cmd, syscall.SIGTERM)
	err = run(cmd)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return &BuildError{Commit: commit, Err: err, Log: logPath, Tail: tail.lines(10)}
	}
	return nil
}
