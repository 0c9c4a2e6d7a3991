// Package safefile writes files the way root should where other users can
// write too.
//
// fs.protected_symlinks makes the kernel refuse to follow, for anyone but
// the link's owner, a symlink in a sticky world-writable directory (/tmp)
// that the directory's owner did not make: another user cannot point root's
// write at /etc/shadow. A program that follows links itself (readlink, then
// writes the target) gets no such protection, and the sysctl may be off.
// Resolve follows links as the kernel would with it on; Write and OpenFile
// then open what Resolve found through directories opened with
// RESOLVE_NO_SYMLINKS and files opened with O_NOFOLLOW, so that a link
// planted after the check is not followed either.
//
// Write never writes a Result onto a device (except the null device, where
// nothing lands) and never opens a FIFO, whose open(2) waits for a reader
// without end.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Errors a caller can test for. Each is wrapped with the path it is about.
var (
	// ErrPlantedLink reports a symlink that the kernel's
	// fs.protected_symlinks would not follow: in a sticky world-writable
	// directory, owned by neither the directory's owner nor the caller.
	// The error is a *LinkError.
	ErrPlantedLink = errors.New("symlink planted by another user")
	// ErrSymlink reports a symlink where Options.NoFollow wants a file.
	ErrSymlink = errors.New("is a symlink")
	// ErrDevice reports a block or character device other than the null
	// device.
	ErrDevice = errors.New("is a device")
	// ErrFIFO reports a named pipe: opening one for writing waits for a
	// reader, for ever if none comes.
	ErrFIFO = errors.New("is a FIFO")
)

// LinkError is a planted symlink: where it is, who owns it, and the
// directory it is in.
type LinkError struct {
	Link     string
	Owner    uint32
	Dir      string
	DirOwner uint32
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("symlink %s belongs to uid %d, not to this user or to the owner (uid %d) of the sticky world-writable directory %s it is in; remove it or use another path",
		e.Link, e.Owner, e.DirOwner, e.Dir)
}

func (e *LinkError) Unwrap() error { return ErrPlantedLink }

// maxLinks is how many symlinks Resolve follows, as the kernel does
// (MAXSYMLINKS).
const maxLinks = 40

// Resolve returns the path a write to path lands on: absolute, with every
// symlink followed, including a last one whose target does not exist yet.
// A path whose rest does not exist is returned as far as it was resolved,
// with the rest appended. A symlink the kernel's fs.protected_symlinks
// would refuse is a *LinkError, whatever the sysctl says; a loop is ELOOP.
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := splitPath(abs)
	cur := "/"
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			// cur has no symlinks left, so its parent is its lexical one.
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if err := checkLink(next, cur, st); err != nil {
			return "", err
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: path, Err: syscall.ELOOP}
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(to) {
			cur = "/"
		}
		rest = append(splitPath(to), rest...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(p, "/")
}

// checkLink applies the rule of fs.protected_symlinks (may_follow_link in
// fs/namei.c) to the symlink link, of status st, in directory dir.
func checkLink(link, dir string, st fs.FileInfo) error {
	ls, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var ds unix.Stat_t
	if err := unix.Stat(dir, &ds); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	sticky := ds.Mode&unix.S_ISVTX != 0 && ds.Mode&unix.S_IWOTH != 0
	if !sticky || ls.Uid == uint32(os.Geteuid()) || ls.Uid == ds.Uid {
		return nil
	}
	return &LinkError{Link: link, Owner: ls.Uid, Dir: dir, DirOwner: ds.Uid}
}

// Options controls Target, Write and OpenFile.
type Options struct {
	// NoFollow refuses a path whose last element is a symlink (ErrSymlink)
	// instead of following it: for files in a store tailgate owns, where a
	// link is never tailgate's.
	NoFollow bool
}

// Target returns where a write to path lands (see Resolve) and what is
// there now: nil when nothing is. It refuses what Write would not write: a
// directory (EISDIR), a device other than the null device (ErrDevice), a
// FIFO (ErrFIFO), and with opt.NoFollow a symlink (ErrSymlink).
func Target(path string, opt Options) (dest string, st fs.FileInfo, err error) {
	if opt.NoFollow {
		dir, err := Resolve(filepath.Dir(path))
		if err != nil {
			return "", nil, err
		}
		dest = filepath.Join(dir, filepath.Base(path))
	} else if dest, err = Resolve(path); err != nil {
		return "", nil, err
	}
	st, err = os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) && !opt.NoFollow {
		// A link Resolve could not follow by name, as /proc/self/fd/1 to
		// "pipe:[123]": the kernel can.
		st, err = os.Stat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dest, nil, nil
	case err != nil:
		return "", nil, err
	}
	if err := writable(path, st); err != nil {
		return "", nil, err
	}
	return dest, st, nil
}

// writable refuses, naming path, a file of status st that a Result is not
// written on.
func writable(path string, st fs.FileInfo) error {
	m := st.Mode()
	var why error
	switch {
	case m&fs.ModeSymlink != 0:
		why = ErrSymlink
	case m.IsDir():
		why = syscall.EISDIR
	case m&fs.ModeNamedPipe != 0:
		why = ErrFIFO
	case m&fs.ModeDevice != 0 && !isNull(st):
		why = ErrDevice
	default:
		return nil
	}
	return &fs.PathError{Op: "write", Path: path, Err: why}
}

// isNull reports whether st is the null device (character 1:3): what is
// written there is discarded, so writing a Result there writes nothing.
func isNull(st fs.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.Mode()&fs.ModeCharDevice != 0 && unix.Major(s.Rdev) == 1 && unix.Minor(s.Rdev) == 3
}

// openDir opens the directory dir, which Resolve returned, refusing any
// symlink on the way: one there now was planted after Resolve looked.
func openDir(dir string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, dir, &how)
		switch {
		case err == unix.EINTR || err == unix.EAGAIN:
			continue
		case err == unix.ENOSYS:
			// Before Linux 5.6: only the last element is checked.
			fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err == unix.ELOOP {
			err = fmt.Errorf("%w on the way (changed while tailgate wrote)", ErrSymlink)
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		return fd, nil
	}
}

// OpenFile opens path as os.OpenFile does, with flag, but never through a
// symlink: not the last element (O_NOFOLLOW: ErrSymlink), not a planted
// one on the way (see Resolve), not one swapped in after the check. It
// refuses what Target refuses. For the files tailgate keeps open, as a
// lock.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	dest, _, err := Target(path, Options{NoFollow: true})
	if err != nil {
		return nil, err
	}
	dirfd, err := openDir(filepath.Dir(dest))
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	fd, err := openat(dirfd, filepath.Base(dest), flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err == nil {
		err = writable(path, st) // a FIFO or device put there meanwhile
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	// O_NONBLOCK only kept open(2) from waiting on a FIFO.
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func openat(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, perm)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ELOOP && flag&unix.O_NOFOLLOW != 0 {
			err = ErrSymlink
		}
		return fd, err
	}
}
