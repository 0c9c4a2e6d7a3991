package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// CheckWritable checks, before any work, that a file can be written at
// path: what Write refuses is refused here (a symlink another user
// planted in a sticky world-writable directory, a device other than
// /dev/null, a FIFO, a directory), and the directory the file goes in
// (through symlinks) exists and is writable. The error is one line that
// names path as the caller gave it and says what to do; the hints speak
// of "-", the command line's standard output.
func CheckWritable(path string) error {
	dest, st, err := Target(path, Options{})
	var le *LinkError
	switch {
	case errors.As(err, &le):
		return fmt.Errorf("cannot write %s: %v", path, le)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("cannot write %s: it is a directory; name a file", path)
	case errors.Is(err, ErrFIFO):
		// Its open(2) would wait for a reader after the run, for ever.
		return fmt.Errorf("cannot write %s: it is a FIFO; write to - and pipe standard output, or name a file", path)
	case errors.Is(err, ErrDevice):
		return fmt.Errorf("cannot write %s: it is a device; name a file, /dev/null, or - for standard output", path)
	case errors.Is(err, syscall.ENOTDIR):
		// A file where a directory should be: named by the checks below.
		dest, st = path, nil
	case err != nil:
		return fmt.Errorf("cannot write %s: %v", path, unwrapPathError(err))
	}
	if st != nil && !st.Mode().IsRegular() {
		return nil // the null device or a socket: written in place
	}
	dir := filepath.Dir(dest)
	dst, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	case errors.Is(err, syscall.ENOTDIR) || err == nil && !dst.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	case err != nil:
		return fmt.Errorf("cannot write %s: %v", path, unwrapPathError(err))
	}
	// The temporary file is created in dir and renamed into place. access(2)
	// also answers EROFS for a read-only mount, which root's permissions do
	// not override.
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("cannot write %s: directory %s is not writable (%v)", path, dir, err)
	}
	// Root passes access(2) in /proc and /sys, where no file can be made:
	// found only after the run, the trials would be lost.
	var fsst unix.Statfs_t
	if err := unix.Statfs(dir, &fsst); err == nil {
		if name, ok := kernelFS[int64(fsst.Type)]; ok {
			return fmt.Errorf("cannot write %s: %s is the kernel's %s file system, where no file can be made; name a file elsewhere, or - for standard output", path, dir, name)
		}
	}
	return nil
}

// kernelFS are the file systems whose files the kernel makes, by magic.
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC: "proc", unix.SYSFS_MAGIC: "sysfs", unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.CGROUP_SUPER_MAGIC: "cgroup", unix.DEBUGFS_MAGIC: "debugfs", unix.TRACEFS_MAGIC: "tracefs",
	unix.SECURITYFS_MAGIC: "securityfs", unix.BPF_FS_MAGIC: "bpf", unix.PSTOREFS_MAGIC: "pstore",
	unix.EFIVARFS_MAGIC: "efivarfs",
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

// Key identifies the file a write to path lands on: its device and inode
// when it exists, else its absolute path with symlinks followed. ok is
// false for files that are not regular: two writes to /dev/null do not
// clash.
func Key(path string) (key string, ok bool) {
	dest, err := Resolve(path)
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
