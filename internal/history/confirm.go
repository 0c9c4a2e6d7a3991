package history

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/tailgate-ci/tailgate/internal/childproc"
	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// Pair is what history confirm re-measures: a commit's record (Head), the
// record of the commit before it on the same target (Base), the scenarios
// both ran, and the kernels they booted.
type Pair struct {
	Base, Head             Entry
	BaseRecord, HeadRecord *Record
	Scenarios              []string
	// Kernels are base's and head's kernels as --kernel takes them: the
	// spec, then its command line; "" for a record of a host run.
	Kernels [2]string
}

// Pair finds commit's record of target ("" when commit has one) and the
// record before it on that target.
func (s *Store) Pair(ctx context.Context, commit, target string) (*Pair, error) {
	v, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	heads, err := v.Index.Lookup(commit)
	if err != nil {
		return nil, err
	}
	var head *Entry
	var names []string
	for i := range heads {
		names = append(names, heads[i].Target)
		if target == "" || heads[i].Target == target {
			head = &heads[i]
		}
	}
	if head == nil || (target == "" && len(heads) > 1) {
		return nil, badInputf("commit %s has records of targets %s; name one with --target", commit, strings.Join(names, ", "))
	}
	var base *Entry
	for i := range v.Index.Entries {
		e := &v.Index.Entries[i]
		if e.Commit == head.Commit {
			break
		}
		if e.Target == head.Target {
			base = e
		}
	}
	if base == nil {
		return nil, badInputf("commit %s is the first of target %s in %s: there is no commit before it to confirm against", head.Commit, head.Target, s)
	}
	p := &Pair{Base: *base, Head: *head}
	if p.BaseRecord, err = v.Record(*base); err != nil {
		return nil, err
	}
	if p.HeadRecord, err = v.Record(*head); err != nil {
		return nil, err
	}
	for _, sc := range p.HeadRecord.Result.Scenarios {
		if p.BaseRecord.Result.Find(sc.Name) != nil {
			p.Scenarios = append(p.Scenarios, sc.Name)
		}
	}
	if len(p.Scenarios) == 0 {
		return nil, badInputf("commits %s and %s share no scenario", Short(base.Commit), Short(head.Commit))
	}
	for _, r := range []struct {
		commit string
		rec    *Record
	}{{base.Commit, p.BaseRecord}, {head.Commit, p.HeadRecord}} {
		if err := checkRecordedKernel(r.commit, r.rec.Result.Target); err != nil {
			return nil, err
		}
	}
	p.Kernels = [2]string{kernelArg(p.BaseRecord.Result.Target), kernelArg(p.HeadRecord.Result.Target)}
	switch c := p.HeadRecord.Result.Target.Clock; c {
	case "", result.ClockReal, result.ClockVirtual:
	default:
		return nil, badInputf("the record of %s names clock %q, which is neither %s nor %s; the record is not tailgate's or was edited", Short(head.Commit), c, result.ClockReal, result.ClockVirtual)
	}
	return p, nil
}

// checkRecordedKernel refuses a record's kernel that is not one a run
// could have recorded: its text becomes a --kernel argument. A spec is
// one word, its command line printable text.
func checkRecordedKernel(commit string, t result.Target) error {
	if strings.ContainsFunc(t.Kernel+t.Cmdline, plaintext.Hides) {
		return badRecordedKernel(commit, t.Kernel+" "+t.Cmdline, "holds a control character")
	}
	if strings.ContainsFunc(t.Kernel, unicode.IsSpace) || strings.HasPrefix(t.Kernel, "-") {
		return badRecordedKernel(commit, t.Kernel, "is not one word that is a spec")
	}
	return nil
}

// checkRecordedFile refuses a recorded kernel spec that is a path but
// not of a regular file here: root reads it whole, and a device or a
// FIFO is a read that never ends.
func checkRecordedFile(commit, kernel string) error {
	spec, _, _ := strings.Cut(kernel, " ")
	if strings.HasPrefix(spec, "debian:") {
		return nil
	}
	if st, err := os.Stat(spec); err != nil {
		return badRecordedKernel(commit, spec, "is not a file here ("+err.Error()+"); give --build CMD to build the commits' kernels")
	} else if !st.Mode().IsRegular() {
		return badRecordedKernel(commit, spec, "is not a regular file")
	}
	return nil
}

func badRecordedKernel(commit, kernel, what string) error {
	return badInputf("the record of %s names kernel %q, which %s; the record is not tailgate's or was edited", Short(commit), kernel, what)
}

// Short is the first 12 digits of commit c, for messages.
func Short(c string) string { return c[:min(12, len(c))] }

// kernelArg is a VM target's kernel as --kernel takes it, "" for the host.
func kernelArg(t result.Target) string {
	if t.Kind != "vm" || t.Kernel == "" {
		return ""
	}
	if t.Cmdline != "" {
		return t.Kernel + " " + t.Cmdline
	}
	return t.Kernel
}

// buildGrace is how long a build has to end after SIGTERM before what is
// left of it is killed.
const buildGrace = 10 * time.Second

// BuildKernel runs the shell command cmdline for commit, with
// TAILGATE_COMMIT and TAILGATE_OUT (out, made if missing) in its
// environment and its output on log, and returns the kernel image it must
// have written, out/bzImage. A command that exits 0 without writing it is
// ErrBadInput; any other error is the machinery's.
func BuildKernel(ctx context.Context, cmdline, commit, out string, log io.Writer) (string, error) {
	if err := safefile.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Env = append(os.Environ(), "TAILGATE_COMMIT="+commit, "TAILGATE_OUT="+out)
	cmd.Stdout, cmd.Stderr = log, log
	// An interrupt ends the build whole (its make and compilers, not only
	// the shell), and a tailgate killed outright takes the shell with it.
	childproc.Group(cmd, syscall.SIGTERM, buildGrace)
	err := childproc.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", fmt.Errorf("--build for %s: %w", Short(commit), err)
	}
	img := filepath.Join(out, "bzImage")
	if st, err := os.Stat(img); err != nil || !st.Mode().IsRegular() {
		return "", badInputf("--build for %s exited 0 but wrote no %s; the command must write the kernel image there", Short(commit), img)
	}
	return img, nil
}

// Build replaces the pair's kernels by what the shell command cmdline
// builds for each commit (BuildKernel), into dir/base and dir/head; dir
// "" is a new temporary directory.
func (p *Pair) Build(ctx context.Context, cmdline, dir string, log io.Writer) error {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "tailgate-confirm-"); err != nil {
			return err
		}
	}
	for i, c := range []struct{ role, commit string }{{"base", p.Base.Commit}, {"head", p.Head.Commit}} {
		img, err := BuildKernel(ctx, cmdline, c.commit, filepath.Join(dir, c.role), log)
		if err != nil {
			return err
		}
		p.Kernels[i] = img
	}
	return nil
}

// Boot makes ready the kernels the pair's gate boots: what the shell
// command build makes of each commit (Build, into dir), or with no
// command the records' own. Records of host runs name none: ErrBadInput.
func (p *Pair) Boot(ctx context.Context, build, dir string, log io.Writer) error {
	if build != "" {
		if err := p.Build(ctx, build, dir, log); err != nil {
			return err
		}
	}
	if p.Kernels[0] == "" || p.Kernels[1] == "" {
		return badInputf("the records of %s and %s ran on the host, so they name no kernel to boot; give --build CMD that builds each commit's kernel into $TAILGATE_OUT/bzImage, or, for a program of your own, tailgate bisect --good %s --bad %s --build CMD SCENARIO", Short(p.Base.Commit), Short(p.Head.Commit), Short(p.Base.Commit), Short(p.Head.Commit))
	}
	if build == "" {
		for i, commit := range []string{p.Base.Commit, p.Head.Commit} {
			if err := checkRecordedFile(commit, p.Kernels[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// GateArgs are the arguments of the same-job gate that re-measures the
// pair: its scenarios, base's kernel then head's, each named after its
// commit (two builds are both bzImage, and a false lead may have booted
// one kernel twice), the clock the head's record ran on when it says,
// then extra (whose --clock wins).
//
// The scenarios' names come from the records, so they go last, after
// "--" (after extra's own "--" when it has one), where no name can be
// taken for a flag; the caller checks them against the rules of a
// scenario's name first.
func (p *Pair) GateArgs(extra []string) []string {
	args := []string{"--kernel", Short(p.Base.Commit) + "=" + p.Kernels[0], "--kernel", Short(p.Head.Commit) + "=" + p.Kernels[1]}
	if c := p.HeadRecord.Result.Target.Clock; c != "" {
		args = append(args, "--clock", c)
	}
	args = append(args, extra...)
	if !slices.Contains(extra, "--") {
		args = append(args, "--")
	}
	return append(args, p.Scenarios...)
}

// ParseTime reads a commit's time: RFC 3339 or Unix seconds.
func ParseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Parse(time.RFC3339, s)
}

// ParseAge reads an age to prune at: a Go duration or a number of days
// ("90d").
func ParseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad age")
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad age")
	}
	return d, nil
}

// inputError is bad input worded for the user alone: it is ErrBadInput
// without that error's text.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badInputf(format string, a ...any) error { return &inputError{fmt.Sprintf(format, a...)} }
