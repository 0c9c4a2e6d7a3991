package bisect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// git runs git in directories of one repository. Its output is read, so
// git speaks English (LC_ALL=C), and no GIT_DIR or GIT_WORK_TREE of the
// caller's environment may point a worktree's commands at the user's
// checkout.
type git struct{}

// gitEnv is the environment git runs in.
func gitEnv() []string { return append(withoutGitDirs(), "LC_ALL=C") }

// run runs git -C dir args and returns its standard output, its exit
// status (-1 when it did not run to an end) and, for a status other
// than 0, an error naming the command and git's first line of complaint.
func (git) run(ctx context.Context, dir string, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), 0, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		return stdout.String(), code, ctx.Err()
	}
	msg := strings.TrimSpace(stderr.String())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = err.Error()
	}
	return stdout.String(), code, fmt.Errorf("git %s: %s", args[0], msg)
}

// out is run for the commands whose output is one value.
func (g git) out(ctx context.Context, dir string, args ...string) (string, error) {
	s, _, err := g.run(ctx, dir, args...)
	return strings.TrimSpace(s), err
}

// commit resolves what the user named a commit to its full name.
func (g git) commit(ctx context.Context, dir, flag, name string) (string, error) {
	if name == "" {
		return "", badInputf("%s: name a commit", flag)
	}
	sha, code, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", name+"^{commit}")
	if code == 1 {
		hint := ""
		if shallow, _ := g.out(ctx, dir, "rev-parse", "--is-shallow-repository"); shallow == "true" {
			hint = "; it is a shallow clone: fetch the history (actions/checkout's fetch-depth: 0)"
		}
		return "", badInputf("%s %s: no such commit in %s%s", flag, name, dir, hint)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(sha), nil
}

// subject is commit's first line, for messages.
func (g git) subject(ctx context.Context, dir, commit string) string {
	s, err := g.out(ctx, dir, "log", "-1", "--format=%s", commit)
	if err != nil {
		return ""
	}
	return s
}

var (
	firstBadLine = regexp.MustCompile(`(?m)^([0-9a-f]{40,64}) is the first bad commit$`)
	shaLine      = regexp.MustCompile(`(?m)^([0-9a-f]{40,64})$`)
)

// ended reads what git bisect printed after a mark: the first bad commit
// when it names one, the commits it could be any of when only skipped
// ones are left, neither while the bisect goes on.
func ended(out string) (first string, candidates []string) {
	if m := firstBadLine.FindStringSubmatch(out); m != nil {
		return m[1], nil
	}
	if _, list, ok := strings.Cut(out, "The first bad commit could be any of:\n"); ok {
		for _, m := range shaLine.FindAllStringSubmatch(list, -1) {
			candidates = append(candidates, m[1])
		}
	}
	return "", candidates
}

// Short is the first 12 digits of commit c, for messages.
func Short(c string) string { return c[:min(12, len(c))] }
