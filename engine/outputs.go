package engine

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/render"
)

// StdoutPath is the output path that means standard output, as in -o -.
const StdoutPath = "-"

// DescribeOutput names where path writes to, for messages.
func DescribeOutput(path string) string {
	if path == StdoutPath {
		return "standard output"
	}
	return path
}

// OutputPath is where the Result of target t goes when -o names path: the
// path itself for a single target, else path with the target's name
// before the extension.
func OutputPath(path string, t Target, n int) string {
	if n <= 1 || path == "" {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + t.Name() + ext
}

// CheckOutput checks, before any work, that a file can be written at path
// (safefile.CheckWritable); "" (none) and "-" (standard output) pass.
// What cannot be written is an InputError.
func CheckOutput(path string) error {
	if path == "" || path == StdoutPath {
		return nil
	}
	if err := safefile.CheckWritable(path); err != nil {
		return &InputError{Err: err}
	}
	return nil
}

// CheckTargetOutputs checks, before anything runs, where -o path puts each
// target's Result: one file per target, so standard output will not do.
func CheckTargetOutputs(path string, targets []Target) error {
	if path == StdoutPath {
		return Inputf("-o - writes one Result, and %d targets make %d: give -o FILE (each target's goes to FILE-TARGET.json)", len(targets), len(targets))
	}
	for _, t := range targets {
		if err := CheckOutput(OutputPath(path, t, len(targets))); err != nil {
			return err
		}
	}
	return nil
}

// WriteResult writes r to path (atomically, see result.WriteFileAtomic),
// or to stdout when path is "-".
func WriteResult(path string, r *result.Result, stdout io.Writer) error {
	if path != StdoutPath {
		return result.Write(path, r)
	}
	b, err := result.Marshal(r)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// WriteTargetResults writes each target's Result where -o path says
// (path-TARGET.json), what was measured kept even when the rounds were cut
// short (runErr), and returns runErr or the first write error.
func WriteTargetResults(path string, targets []Target, results []*result.Result, runErr error, log io.Writer) error {
	for i, t := range targets {
		out := OutputPath(path, t, len(targets))
		if out == "" || results[i] == nil {
			continue
		}
		if err := result.Write(out, results[i]); err != nil {
			return errors.Join(runErr, Infra(fmt.Errorf("write result: %w", err)))
		}
		what := "result"
		if runErr != nil {
			what = "partial result"
		}
		fmt.Fprintf(log, "%s of %s written to %s\n", what, t.Name(), out)
	}
	return runErr
}

// ErrRegression is what a gate that failed returns, once its report is
// written: exit 1.
var ErrRegression = errors.New("regression")

// Verdict writes m to outs and turns it into the command's outcome:
// ErrRegression when the gate fails (strict: an inconclusive verdict too),
// after saying why on stderr, as command, when the report might not be
// on a terminal.
func Verdict(m *report.Matrix, outs []render.Output, strict bool, command string, stdout, stderr io.Writer) error {
	if err := render.WriteOutputs(m, outs, stdout, stderr); err != nil {
		return err
	}
	if !m.Failed(strict) {
		return nil
	}
	for _, line := range render.Failures(m, strict) {
		fmt.Fprintf(stderr, "tailgate %s: %s\n", command, line)
	}
	return ErrRegression
}
