// Package safefile writes files the way root should where other users can
// write too: every file tailgate writes or creates, and every directory it
// makes, goes through it.
//
// fs.protected_symlinks makes the kernel refuse to follow, for anyone but
// the link's owner, a symlink in a sticky world-writable directory (/tmp)
// that the directory's owner did not make; elsewhere, in a directory a
// user owns, the kernel follows that user's links for root. A program
// that follows links itself gets no protection at all. Resolve follows
// only links that no other user could have placed: owned by root or the
// caller, in a directory only they can change. Write, OpenFile and
// MkdirAll then open what Resolve found through directories opened with
// RESOLVE_NO_SYMLINKS and files opened with O_NOFOLLOW, so that a link
// planted after the check is not followed either.
//
// Write never writes a Result onto a device (except the null device, where
// nothing lands) and never opens a FIFO, whose open(2) waits for a reader
// without end. A file it replaces that another user owned is replaced by
// the caller's, of the caller's mode: never left for its old owner to
// edit.
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
	// ErrPlantedLink reports a symlink another user could have placed:
	// owned by another user than root and the caller, or in a directory
	// another user can change. The error is a *LinkError.
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

// LinkError is a symlink another user could have placed: where it is,
// who owns it and its directory, and why it is not followed.
type LinkError struct {
	Link     string
	Owner    uint32
	Dir      string
	DirOwner uint32
	Why      string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("symlink %s is not followed: %s; tailgate follows no link another user could have placed: remove it or use another path", e.Link, e.Why)
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

// checkLink refuses the symlink link, of status st, in directory dir,
// unless no user but root and the caller could have placed it: it is
// theirs, and so is dir, which no one else can write (or only as a
// sticky directory, where others cannot move what is not theirs). It is
// stricter than fs.protected_symlinks (may_follow_link in fs/namei.c),
// which trusts a user's links in that user's own directories.
func checkLink(link, dir string, st fs.FileInfo) error {
	ls, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var ds unix.Stat_t
	if err := unix.Stat(dir, &ds); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	me := uint32(os.Geteuid())
	trusted := func(uid uint32) bool { return uid == 0 || uid == me }
	le := &LinkError{Link: link, Owner: ls.Uid, Dir: dir, DirOwner: ds.Uid}
	switch {
	case !trusted(ls.Uid):
		le.Why = fmt.Sprintf("it belongs to uid %d", ls.Uid)
	case !trusted(ds.Uid):
		le.Why = fmt.Sprintf("its directory %s belongs to uid %d, who could have put it there", dir, ds.Uid)
	case ds.Mode&(unix.S_IWGRP|unix.S_IWOTH) != 0 && ds.Mode&unix.S_ISVTX == 0:
		le.Why = fmt.Sprintf("its directory %s is writable by other users (mode %04o), who could have put it there", dir, ds.Mode&0o7777)
	default:
		return nil
	}
	return le
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

// OpenNoFollow opens path as os.OpenFile does, with flag, but not
// through a symlink at its last element (O_NOFOLLOW: ErrSymlink, which
// open(2) also gives for a loop of links on the way) and without waiting
// on a FIFO (O_NONBLOCK, which a regular file ignores). Unlike OpenFile it
// trusts the directories on the way: for files in a directory tailgate
// checked or made itself, as a journal or a lock, and for stored files
// read back.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s %w", path, ErrSymlink)
	}
	return f, err
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

// MkdirAll makes dir and every missing parent of mode perm (before the
// umask), as os.MkdirAll does, but through no link another user could
// have placed (Resolve refuses it, a *LinkError), each directory made and
// opened relative to its parent without following links, so that a link
// swapped in meanwhile is refused too. A file on the way is ENOTDIR.
func MkdirAll(dir string, perm fs.FileMode) error {
	dest, err := Resolve(dir)
	if err != nil {
		return err
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	at := "/"
	for _, c := range splitPath(dest) {
		if c == "" || c == "." {
			continue
		}
		at = filepath.Join(at, c)
		next, err := openDirAt(fd, c)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(fd, c, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return &fs.PathError{Op: "mkdir", Path: at, Err: err}
			}
			next, err = openDirAt(fd, c)
		}
		unix.Close(fd)
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: at, Err: err}
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}

// openDirAt opens the directory name in dirfd, never through a symlink:
// one there now was put there after Resolve looked.
func openDirAt(dirfd int, name string) (int, error) {
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, ErrSymlink) {
		err = fmt.Errorf("%w on the way (changed while tailgate wrote)", ErrSymlink)
	}
	return fd, err
}
