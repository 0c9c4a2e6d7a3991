// Package bisect finds the first commit of a program's history at which
// a scenario's gated percentile regressed: git bisect moves a worktree of
// its own, and each commit it picks is built there and gated, in one job,
// against a build of the good commit in a second worktree. The user's
// checkout is never touched: both worktrees live in a temporary
// directory, and the bisect is reset and the worktrees removed on every
// way out, an interrupt included.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// ErrBadInput is an input the bisect cannot start from: not a
// repository, a commit that does not exist or is not an ancestor of the
// bad one, no build command.
var ErrBadInput = errors.New("bad bisect input")

// ErrInterrupted is a bisect stopped by its context; what it made is
// removed all the same.
var ErrInterrupted = errors.New("interrupted")

// Options is what a bisect needs.
type Options struct {
	// Repo is a directory of the repository; "" is the working directory.
	Repo      string
	Good, Bad string
	// Build is the shell command (sh -c) that builds a commit in its
	// worktree, TAILGATE_COMMIT set to the commit.
	Build string
	// Scenario is the scenario file. Its relative paths resolve, for each
	// build, in the worktree's copy of its directory. With Kernel, it may
	// be a built-in scenario's name.
	Scenario string
	// Kernel, when set, bisects a kernel: each step boots the kernel the
	// build left, against the good commit's, in one gate in VMs. A path
	// is the image in each worktree (arch/x86/boot/bzImage); a debian:
	// spec is booted as it is on both sides, for a history of boot
	// parameters (CmdlineFile).
	Kernel string
	// CmdlineFile is the file, in each worktree, that holds the kernel's
	// command line; "" is none.
	CmdlineFile string
	// Out keeps each step's files (build and gate logs, reports, Results);
	// "" keeps none.
	Out  string
	Gate Gate
	// Log takes the progress, a line or two per step.
	Log io.Writer
}

// Mark is a commit's term for git bisect.
type Mark string

const (
	Good Mark = "good"
	Bad  Mark = "bad"
	Skip Mark = "skip" // git bisect run's 125
)

// MarkOf is what a step tells git bisect: a regression is bad, no change
// good, an inconclusive gate or a failed build skips the commit.
func MarkOf(m *Measure, buildErr error) Mark {
	switch {
	case buildErr != nil || m == nil:
		return Skip
	case m.Verdict == stats.Regression:
		return Bad
	case m.Verdict == stats.NoChange || m.Verdict == stats.Improvement:
		return Good
	}
	return Skip
}

// Step is one commit built and gated.
type Step struct {
	// N counts the steps git bisect chose from 1; 0 is the check of the
	// bad commit before the bisect starts.
	N               int
	Commit, Subject string
	Build           *BuildError // the build failed
	Measure         *Measure
	Mark            Mark
	// Dir holds its files while the bisect runs, and after it with -o.
	Dir string
}

// Outcome is how a bisect ended. First is the first bad commit; when only
// skipped commits were left, it is "" and Candidates are the commits it
// is one of. When Check (the bad commit against the good) is not bad,
// there was nothing to bisect and neither is set.
type Outcome struct {
	Good, Bad  string
	Check      Step
	Steps      []Step
	First      string
	Candidates []string
	Elapsed    time.Duration
}

// Found says the bad commit regressed against the good one: the first
// bad commit, or its candidates, are named.
func (o *Outcome) Found() bool { return o.Check.Mark == Bad }

// Step is the step that measured commit, nil if none did.
func (o *Outcome) Step(commit string) *Step {
	if o.Check.Commit == commit {
		return &o.Check
	}
	for i := range o.Steps {
		if o.Steps[i].Commit == commit {
			return &o.Steps[i]
		}
	}
	return nil
}

// bisector is one bisect's state, for its cleanup.
type bisector struct {
	o         Options
	g         git
	top, tmp  string
	out       string // where the steps' directories go
	rel       string // the scenario's directory in the repository
	worktrees []string
	stepWT    string // the worktree git bisect moves
	bisecting bool   // git bisect started there
}

// Run bisects from o.Good to o.Bad. Cancelling ctx interrupts it: the
// error is then ErrInterrupted, and says whether the cleanup failed.
func Run(ctx context.Context, o Options) (out *Outcome, err error) {
	start := time.Now()
	b := &bisector{o: o}
	if err := b.check(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	if b.tmp, err = os.MkdirTemp("", "tailgate-bisect-"); err != nil {
		return nil, err
	}
	defer func() {
		cerr := b.cleanup(ctx)
		switch {
		case err != nil && ctx.Err() != nil && cerr == nil:
			out, err = nil, fmt.Errorf("%w; the bisect is reset and its worktrees removed", ErrInterrupted)
		case err != nil && ctx.Err() != nil:
			out, err = nil, fmt.Errorf("%w, and %w", ErrInterrupted, cerr)
		case cerr != nil:
			err = errors.Join(err, cerr)
		}
	}()
	b.out = o.Out
	if b.out == "" {
		b.out = filepath.Join(b.tmp, "steps")
	}
	out = &Outcome{Good: b.o.Good, Bad: b.o.Bad}
	if err := b.bisect(ctx, out); err != nil {
		return nil, err
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// check reads and checks the input before anything is made: the
// repository, the two commits, the scenario and the output directory.
// o.Good and o.Bad become full commit names.
func (b *bisector) check(ctx context.Context) error {
	o := &b.o
	if strings.TrimSpace(o.Build) == "" {
		return badInputf("--build: give the shell command that builds a commit in its checkout (e.g. 'make bin/server')")
	}
	if st, err := os.Stat(o.Scenario); o.Kernel == "" && (err != nil || !st.Mode().IsRegular()) {
		return badInputf("scenario %s: not a file; bisect gates a scenario file whose workload runs your program (an exec or ufunc scenario), or with --kernel a kernel under any scenario", o.Scenario)
	}
	if o.CmdlineFile != "" && o.Kernel == "" {
		return badInputf("--cmdline-file %s: a kernel's command line, for a bisect of a kernel; give --kernel too", o.CmdlineFile)
	}
	repo := o.Repo
	if repo == "" {
		repo = "."
	}
	top, err := b.g.out(ctx, repo, "rev-parse", "--show-toplevel")
	if err != nil {
		return badInputf("--repo %s: not a git checkout (%v)", repo, err)
	}
	b.top = top
	if o.Good, err = b.g.commit(ctx, top, "--good", o.Good); err != nil {
		return err
	}
	if o.Bad, err = b.g.commit(ctx, top, "--bad", o.Bad); err != nil {
		return err
	}
	if o.Good == o.Bad {
		return badInputf("--good and --bad are one commit, %s: give a good commit and a later bad one", Short(o.Good))
	}
	if _, code, err := b.g.run(ctx, top, "merge-base", "--is-ancestor", o.Good, o.Bad); code == 1 {
		return badInputf("--good %s is not an ancestor of --bad %s: bisect looks for the change between a good commit and a later bad one", Short(o.Good), Short(o.Bad))
	} else if err != nil {
		return err
	}
	if b.rel, err = scenarioDir(top, o.Scenario); err != nil {
		return err
	}
	if o.Out != "" {
		if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
			return badInputf("-o %s: not empty; give a new or empty directory for the steps' files", o.Out)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return badInputf("-o %s: %v", o.Out, err)
		}
	}
	return nil
}

// scenarioDir is the scenario file's directory relative to the top of
// the repository: where its relative paths resolve in each worktree. A
// scenario outside the repository has its paths resolve at the top.
func scenarioDir(top, scenario string) (string, error) {
	abs, err := filepath.Abs(scenario)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	if t, err := filepath.EvalSymlinks(top); err == nil {
		top = t
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ".", nil
	}
	return rel, nil
}

func (b *bisector) logf(format string, a ...any) {
	if b.o.Log != nil {
		fmt.Fprintf(b.o.Log, "bisect: "+format+"\n", a...)
	}
}

// worktree adds a worktree at commit under the temporary directory.
func (b *bisector) worktree(ctx context.Context, name, commit string) (string, error) {
	dir := filepath.Join(b.tmp, name)
	// Listed first, so that one an interrupt left half made is removed too.
	b.worktrees = append(b.worktrees, dir)
	if _, err := b.g.out(ctx, b.top, "worktree", "add", "--detach", "--quiet", dir, commit); err != nil {
		return "", err
	}
	return dir, nil
}

var roughly = regexp.MustCompile(`\(roughly (\d+) steps?\)`)

func (b *bisector) bisect(ctx context.Context, out *Outcome) error {
	o := b.o
	count, _ := b.g.out(ctx, b.top, "rev-list", "--count", o.Good+".."+o.Bad)
	b.logf("good %s, bad %s, %s commits after good", Short(o.Good), Short(o.Bad), count)
	goodWT, err := b.worktree(ctx, "good", o.Good)
	if err != nil {
		return err
	}
	goodFiles := filepath.Join(b.out, "good")
	if err := safefile.MkdirAll(goodFiles, 0o755); err != nil {
		return err
	}
	b.logf("building good %s", Short(o.Good))
	if err := build(ctx, o.Build, goodWT, o.Good, filepath.Join(goodFiles, "build.log")); err != nil {
		var be *BuildError
		if errors.As(err, &be) {
			b.logLines(be.Tail)
			return fmt.Errorf("the good commit %s does not build: %w", Short(o.Good), err)
		}
		return err
	}
	stepWT, err := b.worktree(ctx, "step", o.Bad)
	if err != nil {
		return err
	}
	b.stepWT = stepWT
	good := side{dir: filepath.Join(goodWT, b.rel)}
	if good.kernel, err = b.kernelArg("good", goodWT, o.Good); err != nil {
		return err
	}
	b.logf("checking bad %s %q against good", Short(o.Bad), b.g.subject(ctx, b.top, o.Bad))
	out.Check, err = b.step(ctx, 0, o.Bad, good, stepWT)
	if err != nil {
		return err
	}
	if out.Check.Build != nil {
		return fmt.Errorf("the bad commit %s does not build: %w", Short(o.Bad), out.Check.Build)
	}
	if out.Check.Mark != Bad {
		return nil
	}

	b.bisecting = true
	said, code, err := b.g.run(ctx, stepWT, "bisect", "start", o.Bad, o.Good)
	for n := 1; ; n++ {
		if first, cands := ended(said); first != "" || cands != nil {
			out.First, out.Candidates = first, cands
			return b.keepLog(ctx, stepWT)
		}
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("git bisect: exit %d: %s", code, strings.TrimSpace(said))
		}
		head, err := b.g.out(ctx, stepWT, "rev-parse", "HEAD")
		if err != nil {
			return err
		}
		about := ""
		if m := roughly.FindStringSubmatch(said); m != nil {
			left, _ := strconv.Atoi(m[1])
			about = fmt.Sprintf(" of about %d", n+left)
		}
		b.logf("step %d%s: %s %q", n, about, Short(head), b.g.subject(ctx, b.top, head))
		s, err := b.step(ctx, n, head, good, stepWT)
		if err != nil {
			return err
		}
		out.Steps = append(out.Steps, s)
		said, code, err = b.g.run(ctx, stepWT, "bisect", string(s.Mark), head)
	}
}

// side is the good build as each gate takes it: the directory where the
// scenario's paths resolve, and the --kernel value of a kernel's bisect.
type side struct{ dir, kernel string }

// kernelArg is the --kernel value of the kernel the build of commit left
// in worktree wt, named name: the image (o.Kernel in wt, or the debian:
// spec) and the command line CmdlineFile holds there. "" when the bisect
// is a program's. An image or command line file the build did not leave
// is the input's: the command must leave them there.
func (b *bisector) kernelArg(name, wt, commit string) (string, error) {
	o := b.o
	if o.Kernel == "" {
		return "", nil
	}
	spec := o.Kernel
	if !strings.HasPrefix(spec, "debian:") {
		spec = filepath.Join(wt, o.Kernel)
		if st, err := os.Stat(spec); err != nil || !st.Mode().IsRegular() {
			return "", badInputf("--kernel %s: the build of %s left no such file; --build must leave the kernel image there", o.Kernel, Short(commit))
		}
	}
	arg := name + "=" + spec
	if o.CmdlineFile != "" {
		line, err := os.ReadFile(filepath.Join(wt, o.CmdlineFile))
		if err != nil {
			return "", badInputf("--cmdline-file %s: not in %s: %v", o.CmdlineFile, Short(commit), errors.Unwrap(err))
		}
		if c := strings.Join(strings.Fields(string(line)), " "); c != "" {
			arg += " " + c
		}
	}
	return arg, nil
}

// step builds commit, checked out in worktree wt, and gates it against
// the good build.
func (b *bisector) step(ctx context.Context, n int, commit string, good side, wt string) (Step, error) {
	s := Step{N: n, Commit: commit, Subject: b.g.subject(ctx, b.top, commit)}
	name := "bad-" + Short(commit)
	if n > 0 {
		name = fmt.Sprintf("step-%d-%s", n, Short(commit))
	}
	s.Dir = filepath.Join(b.out, name)
	if err := safefile.MkdirAll(s.Dir, 0o755); err != nil {
		return s, err
	}
	label := fmt.Sprintf("step %d: %s", n, Short(commit))
	if n == 0 {
		label = fmt.Sprintf("bad %s against good:", Short(commit))
	}
	err := build(ctx, b.o.Build, wt, commit, filepath.Join(s.Dir, "build.log"))
	if errors.As(err, &s.Build) {
		s.Mark = Skip
		b.logLines(s.Build.Tail)
		b.logf("%s does not build (%v; its output: %s): %s", label, s.Build.Err, s.Build.Log, s.Mark)
		return s, nil
	}
	if err != nil {
		return s, err
	}
	r := Request{Commit: commit, GoodDir: good.dir, Dir: filepath.Join(wt, b.rel), Out: s.Dir, Scratch: b.o.Out == ""}
	if good.kernel != "" {
		k, err := b.kernelArg(Short(commit), wt, commit)
		if err != nil {
			return s, err
		}
		r.Kernels = [2]string{good.kernel, k}
	}
	s.Measure, err = b.o.Gate.Gate(ctx, r)
	if err != nil {
		return s, err
	}
	s.Mark = MarkOf(s.Measure, nil)
	b.logf("%s %s: %s", label, Describe(s.Measure), s.Mark)
	return s, nil
}

// Describe is a measure in a few words: its verdict and its worst gated
// ratio, "regression, ufunc.work:tg_op p99 ×3.02 [×2.95, ×3.10]".
func Describe(m *Measure) string {
	w := m.Worst()
	if w == nil {
		return string(m.Verdict)
	}
	return fmt.Sprintf("%s, %s %s %s", m.Verdict, w.Metric, w.Percentile, formatRatio(w))
}

func formatRatio(v *render.JSONVerdict) string {
	s := "×" + ratioString(v.Ratio)
	if v.Lo != nil && v.Hi != nil {
		s += " [×" + ratioString(v.Lo) + ", ×" + ratioString(v.Hi) + "]"
	}
	return s
}

func ratioString(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r, 'f', 2, 64)
}

func (b *bisector) logLines(lines []string) {
	for _, l := range lines {
		b.logf("  | %s", l)
	}
}

// keepLog writes git bisect's log beside the steps when they are kept:
// git bisect replay replays it.
func (b *bisector) keepLog(ctx context.Context, wt string) error {
	if b.o.Out == "" {
		return nil
	}
	s, err := b.g.out(ctx, wt, "bisect", "log")
	if err != nil {
		return err
	}
	return safefile.Write(filepath.Join(b.o.Out, "bisect.log"), []byte(s+"\n"), safefile.Options{NoFollow: true})
}

// cleanup resets the bisect, removes the worktrees and the temporary
// directory. It runs after an interrupt too, so it does not take ctx's
// cancellation, only a deadline of its own.
func (b *bisector) cleanup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var errs []error
	if b.bisecting {
		if _, err := b.g.out(ctx, b.stepWT, "bisect", "reset"); err != nil {
			errs = append(errs, err)
		}
	}
	pruned := true
	for _, wt := range b.worktrees {
		if _, err := b.g.out(ctx, b.top, "worktree", "remove", "--force", wt); err != nil {
			pruned = false
		}
	}
	if err := os.RemoveAll(b.tmp); err != nil {
		errs = append(errs, err)
	}
	if !pruned {
		// A worktree git would not remove is gone with the directory; its
		// record in the repository goes with prune.
		if _, err := b.g.out(ctx, b.top, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("clean up %s: %w", b.tmp, errors.Join(errs...))
	}
	return nil
}

// inputError is bad input worded for the user alone: it is ErrBadInput
// without that error's text.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badInputf(format string, a ...any) error { return &inputError{fmt.Sprintf(format, a...)} }
