package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// TempPrefix is how the temporaries of Write for the file base begin:
// ".BASE.tmp-PID-", a random number follows. Hidden, and carrying the
// writer's pid, so that a later run can tell one whose writer was killed
// from one being written.
func TempPrefix(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-"
}

// Write writes b to path so that a reader never sees half a file and a
// failure leaves an existing file whole: a temporary file in the same
// directory (O_CREAT|O_EXCL|O_NOFOLLOW), synced, renamed over the file.
//
// A regular file of the caller's is replaced and keeps its permissions;
// another user's gets the caller's file of mode 0644 in its place, so
// that a file that was that user's to edit is not left so. A symlink is
// followed as Resolve does, also when its target does not exist yet: the
// target is replaced and the link stays a link; with opt.NoFollow it is
// refused. The null device takes the write and stays a device; a listening
// socket is connected to and written. Everything else Target refuses: a
// directory, another device, a FIFO.
func Write(path string, b []byte, opt Options) error {
	dest, st, err := Target(path, opt)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if st != nil {
		switch m := st.Mode(); {
		case m&fs.ModeSocket != 0:
			return writeSocket(dest, b)
		case m&fs.ModeDevice != 0: // the null device: Target refuses others
			f, err := OpenFile(dest, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.Write(b)
			return errors.Join(err, f.Close())
		default:
			if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) == os.Geteuid() {
				mode = m.Perm()
			}
		}
	}
	dirfd, err := openDir(filepath.Dir(dest))
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	base := filepath.Base(dest)
	f, tmp, err := createTemp(dirfd, filepath.Dir(dest), base)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// renameat(2) replaces the name base in the directory opened above; a
	// symlink put there meanwhile is replaced, never followed.
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(filepath.Dir(dest), tmp), New: dest, Err: err}
	}
	renamed = true
	unix.Fsync(dirfd)
	return nil
}

// createTemp creates a new temporary for base in the directory dirfd (dir
// by name, for errors). O_EXCL|O_NOFOLLOW: a planted file or symlink of
// the temporary's name is never written through.
func createTemp(dirfd int, dir, base string) (*os.File, string, error) {
	prefix := TempPrefix(base)
	for range 10000 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err := openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dir, name), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir, name)), name, nil
	}
	return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// writeSocket writes b to the listening unix socket path: open(2) refuses
// sockets.
func writeSocket(path string, b []byte) error {
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
