package result

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Write writes r to path with WriteFileAtomic.
func Write(path string, r *Result) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes b to path so that a reader never sees half a file
// and a failure leaves an existing file whole: a temporary file in the same
// directory, synced, then renamed over the file.
//
// Only regular files are replaced. A symlink is followed, also when its
// target does not exist yet: the target is replaced and the link stays a
// link. A device, FIFO or socket is written in place (/dev/null, /dev/stdout,
// a pipe read by another step): renaming over it would replace it with a
// regular file. A directory is an error.
func WriteFileAtomic(path string, b []byte) error {
	dest, err := FollowLinks(path)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	st, err := os.Stat(dest)
	switch {
	case err == nil && st.IsDir():
		return &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
	case err == nil && !st.Mode().IsRegular():
		return writeInPlace(dest, st.Mode(), b)
	case err == nil:
		mode = st.Mode().Perm() // a replaced file keeps its permissions
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(dest)
	// CreateTemp opens with O_EXCL: a planted file or symlink of the
	// temporary's name is never written through.
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(dest)))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeInPlace writes b to a file that is not a regular file.
func writeInPlace(path string, mode fs.FileMode, b []byte) error {
	if mode&fs.ModeSocket != 0 {
		// open(2) refuses sockets; a listening one is written by
		// connecting to it.
		c, err := net.Dial("unix", path)
		if err != nil {
			return fmt.Errorf("write to socket %s: %w", path, err)
		}
		if _, err := c.Write(b); err != nil {
			c.Close()
			return fmt.Errorf("write to socket %s: %w", path, err)
		}
		return c.Close()
	}
	// No O_CREATE: the file exists, and if it vanished meanwhile this is
	// an error, not a new regular file. O_TRUNC means nothing here.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// maxLinks is how many symlinks FollowLinks follows, as the kernel does
// (MAXSYMLINKS).
const maxLinks = 40

// FollowLinks returns the path a write to path lands on: path with its
// symlinks followed, including a last one whose target does not exist yet.
// A path that does not exist is returned as it is; a symlink loop is
// ELOOP.
func FollowLinks(path string) (string, error) {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p, nil
	}
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			// Relative to the link's directory as the kernel resolves it,
			// not as the path spells it ("dir/.." through a linked dir).
			dir := filepath.Dir(p)
			if d, err := filepath.EvalSymlinks(dir); err == nil {
				dir = d
			}
			to = filepath.Join(dir, to)
		}
		p = to
	}
	return "", &fs.PathError{Op: "follow symlinks", Path: path, Err: syscall.ELOOP}
}

// Temporaries of WriteFileAtomic are named ".NAME.tmp-PID-RANDOM": hidden,
// and carrying the writer's pid so that a later run can tell one whose
// writer was killed from one being written. Older tailgates named them
// ".NAME.tmpRANDOM".
func tempPattern(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
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
