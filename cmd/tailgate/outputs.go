package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
)

// stdoutPath is the output path that means standard output, as in -o -.
const stdoutPath = "-"

// describeOutput names where path writes to, for messages.
func describeOutput(path string) string {
	if path == stdoutPath {
		return "standard output"
	}
	return path
}

// writeResult writes r to path (atomically, see result.WriteFileAtomic), or
// to stdout when path is "-".
func writeResult(path string, r *result.Result, stdout io.Writer) error {
	if path != stdoutPath {
		return result.Write(path, r)
	}
	b, err := result.Marshal(r)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// checkOutputPath checks, before any work, that a file can be written at
// path: what safefile.Write refuses is refused here (a symlink another
// user planted in a sticky world-writable directory, a device other than
// /dev/null, a FIFO, a directory), and the directory the file goes in
// (through symlinks) exists and is writable. "" (none) and "-" (standard
// output) pass. The error is a usage error (exit 2) that names path as the
// user gave it.
func checkOutputPath(path string) error {
	if path == "" || path == stdoutPath {
		return nil
	}
	dest, st, err := safefile.Target(path, safefile.Options{})
	var le *safefile.LinkError
	switch {
	case errors.As(err, &le):
		return usagef("cannot write %s: %v", path, le)
	case errors.Is(err, syscall.EISDIR):
		return usagef("cannot write %s: it is a directory; name a file", path)
	case errors.Is(err, safefile.ErrFIFO):
		// Its open(2) would wait for a reader after the run, for ever.
		return usagef("cannot write %s: it is a FIFO; write to - and pipe standard output, or name a file", path)
	case errors.Is(err, safefile.ErrDevice):
		return usagef("cannot write %s: it is a device; name a file, /dev/null, or - for standard output", path)
	case errors.Is(err, syscall.ENOTDIR):
		// A file where a directory should be: named by the checks below.
		dest, st = path, nil
	case err != nil:
		return usagef("cannot write %s: %v", path, unwrapPathError(err))
	}
	if st != nil && !st.Mode().IsRegular() {
		return nil // the null device or a socket: written in place
	}
	dir := filepath.Dir(dest)
	dst, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("cannot write %s: directory %s does not exist", path, dir)
	case errors.Is(err, syscall.ENOTDIR) || err == nil && !dst.IsDir():
		return usagef("cannot write %s: %s is not a directory", path, dir)
	case err != nil:
		return usagef("cannot write %s: %v", path, unwrapPathError(err))
	}
	// The temporary file is created in dir and renamed into place. access(2)
	// also answers EROFS for a read-only mount, which root's permissions do
	// not override.
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return usagef("cannot write %s: directory %s is not writable (%v)", path, dir, err)
	}
	return nil
}

// unwrapPathError drops the operation and path of a *fs.PathError, for
// messages that already name the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// outputKey identifies the file path writes: its device and inode when it
// exists, else its absolute path with symlinks followed. ok is false for
// files that are not regular: two writes to /dev/null do not clash.
func outputKey(path string) (key string, ok bool) {
	dest, err := safefile.Resolve(path)
	if err != nil {
		dest = path
	}
	if st, err := os.Stat(dest); err == nil {
		if !st.Mode().IsRegular() {
			return "", false
		}
		if sys, isStat := st.Sys().(*syscall.Stat_t); isStat {
			return fmt.Sprintf("inode %d:%d", sys.Dev, sys.Ino), true
		}
	}
	if abs, err := filepath.Abs(dest); err == nil {
		dest = abs
	}
	return "path " + dest, true
}

// checkThresholdMetrics refuses a --threshold for a metric that none of
// metrics (what the scenarios run or compared measure) is: a typo would
// otherwise be ignored and the default threshold gate in its place.
func checkThresholdMetrics(ths []report.Threshold, metrics []string) error {
	for _, th := range ths {
		if th.Metric == "" || slices.Contains(metrics, th.Metric) {
			continue
		}
		known := slices.Compact(slices.Sorted(slices.Values(metrics)))
		if len(known) == 0 {
			return usagef("--threshold %s: no scenario measures %s; they measure nothing", th, th.Metric)
		}
		return usagef("--threshold %s: no scenario measures %s; they measure %s", th, th.Metric, strings.Join(known, ", "))
	}
	return nil
}

// resultMetrics returns the names of the metrics of every scenario in rs.
func resultMetrics(rs ...*result.Result) []string {
	var out []string
	for _, r := range rs {
		for _, s := range r.Scenarios {
			for name := range s.Metrics {
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
