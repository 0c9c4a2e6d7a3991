package result

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// Write writes r to path with WriteFileAtomic.
func Write(path string, r *Result) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes b to path with safefile.Write: a regular file is
// replaced atomically (a temporary in the same directory, synced, renamed
// over it); a symlink is followed unless another user planted it in a
// sticky world-writable directory; a device other than the null device, a
// FIFO or a directory is refused.
func WriteFileAtomic(path string, b []byte) error {
	return safefile.Write(path, b, safefile.Options{})
}

// LoadNoFollow is Load for a file that must not be a symlink, as a stored
// baseline: a link is refused (safefile.ErrSymlink), as is anything but a
// regular file, and the file is opened with O_NOFOLLOW so that a link
// swapped in after a check is not read either.
func LoadNoFollow(path string) (*Result, error) {
	f, err := safefile.OpenNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, safefile.ErrSymlink) {
		return nil, fmt.Errorf("%w; a stored Result must be a file: remove the link", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (%v)", path, ErrCorrupt, st.Mode().Type())
	}
	return read(f, path)
}

// Temporaries of WriteFileAtomic are named ".NAME.tmp-PID-RANDOM"
// (safefile.TempPrefix). Older tailgates named them ".NAME.tmpRANDOM".
func tempPattern(base string) string {
	return safefile.TempPrefix(base) + "*"
}

// parseTemp reports whether name is a temporary of WriteFileAtomic, and the
// pid of its writer (0 for the older form without one).
func parseTemp(name string) (pid int, ok bool) {
	i := strings.LastIndex(name, ".tmp")
	if !strings.HasPrefix(name, ".") || i <= 1 {
		return 0, false
	}
	rest := name[i+len(".tmp"):]
	if r, withPID := strings.CutPrefix(rest, "-"); withPID {
		p, random, found := strings.Cut(r, "-")
		n, err := strconv.Atoi(p)
		if !found || err != nil || n <= 0 || !digits(random) {
			return 0, false
		}
		return n, true
	}
	return 0, digits(rest)
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// IsTemp reports whether a file name is that of a temporary of
// WriteFileAtomic, finished or not: readers of a directory skip it.
func IsTemp(name string) bool {
	_, ok := parseTemp(name)
	return ok
}

// How old a temporary must be before it can be stale: a write takes
// milliseconds. One of the older form, without the writer's pid, must be
// older still.
const (
	staleAfter      = time.Minute
	staleAfterNoPID = time.Hour
)

// RemoveStaleTemps removes the temporaries of WriteFileAtomic in dir whose
// writer is gone (killed before its rename): older than a minute and
// written by a pid that no longer exists (older than an hour for the form
// without a pid). It returns the paths removed; a file it cannot remove is
// an error beside them.
func RemoveStaleTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var removed []string
	var errs []error
	for _, e := range ents {
		pid, ok := parseTemp(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		age := now.Sub(info.ModTime())
		switch {
		case pid == 0 && age < staleAfterNoPID:
			continue
		case pid != 0 && (age < staleAfter || processExists(pid)):
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// processExists reports whether pid names a process (of any user).
func processExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
