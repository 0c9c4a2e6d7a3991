package result

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
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
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp*")
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
