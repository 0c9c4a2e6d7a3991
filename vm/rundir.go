package vm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// runDirPrefix starts the names of the directories VM runs work in, under
// os.TempDir(): tailgate-vm-NAME-RANDOM.
const runDirPrefix = "tailgate-vm-"

// The files of a run directory.
const (
	pidFile      = "pid" // the owner's pid, flocked by the owner while it runs
	initrdFile   = "initramfs.cpio"
	resultsFile  = "results"
	consoleFile  = "console.log"
	scratchFile  = "scratch.img" // the scratch disk, when the run has one
	kallsymsFile = "kallsyms"    // the guest kernel's symbols, when asked for
)

// legacyRunDirAge is how old a run directory without a pid file (made by
// a tailgate that wrote none) must be before it counts as stale: such a
// directory cannot tell whether its run is alive.
const legacyRunDirAge = 24 * time.Hour

// runDir is the directory of one VM run, made with a unique name (mkdir
// fails on an existing one) and mode 0700, so nothing in it can be planted
// or shared with another run. Its pid file is flocked for as long as the
// run lives: the lock goes with the process however it dies, so the next
// run that finds the file unlocked knows the directory is stale.
type runDir struct {
	path string
	lock *os.File
}

// newRunDir removes the stale run directories of dead runs, saying so on
// progress, and makes this run's.
func newRunDir(name string, progress func(string)) (*runDir, error) {
	tmp := os.TempDir()
	for _, p := range removeStaleRunDirs(tmp) {
		progress("removed " + p + ", left by a VM run that died")
	}
	path, err := os.MkdirTemp(tmp, runDirPrefix+safeName(name)+"-")
	if err != nil {
		return nil, err
	}
	d := &runDir{path: path}
	// The pid file gets its name only once locked, so that no one sees
	// it unlocked while this run is alive.
	f, err := os.OpenFile(d.file(".pid.tmp"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX); err == nil {
			if _, err = fmt.Fprintf(f, "%d\n", os.Getpid()); err == nil {
				err = os.Rename(f.Name(), d.file(pidFile))
			}
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(path)
		return nil, fmt.Errorf("run directory: %w", err)
	}
	d.lock = f
	return d, nil
}

func (d *runDir) file(name string) string { return filepath.Join(d.path, name) }

// remove removes the directory; the lock goes last, so a half-removed
// directory is stale for the next run to remove.
func (d *runDir) remove() {
	os.RemoveAll(d.path)
	d.lock.Close()
}

// keepOnly removes all but the named file, and the lock with the pid
// file: what is left is no longer a run's, and stays for the user.
func (d *runDir) keepOnly(name string) {
	ents, _ := os.ReadDir(d.path)
	for _, e := range ents {
		if e.Name() != name {
			os.RemoveAll(d.file(e.Name()))
		}
	}
	d.lock.Close()
}

// safeName is name as a file name part: letters, digits, '.', '_', '-'.
func safeName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// removeStaleRunDirs removes this user's run directories in tmp whose run
// is dead: the pid file there and unlocked, or, in a directory with no pid
// file, an initramfs older than legacyRunDirAge. A directory holding only
// the console log of a failed run has no pid file and no initramfs: it is
// the user's. Symlinks are never followed. It returns what it removed.
func removeStaleRunDirs(tmp string) []string {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue // ReadDir's type is the entry's own: a symlink is not a dir
		}
		path := filepath.Join(tmp, e.Name())
		st, err := e.Info() // lstat
		if err != nil || !st.IsDir() {
			continue
		}
		if s, ok := st.Sys().(*syscall.Stat_t); !ok || int(s.Uid) != os.Geteuid() {
			continue
		}
		if removeIfStale(path, st) {
			removed = append(removed, path)
		}
	}
	return removed
}

// removeIfStale removes the run directory at path if its run is dead.
func removeIfStale(path string, st fs.FileInfo) bool {
	f, err := safefile.OpenNoFollow(filepath.Join(path, pidFile), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		initrd, err := os.Lstat(filepath.Join(path, initrdFile))
		if err == nil && time.Since(initrd.ModTime()) > legacyRunDirAge && time.Since(st.ModTime()) > legacyRunDirAge {
			return os.RemoveAll(path) == nil
		}
		return false
	}
	if err != nil {
		return false
	}
	// The lock is held until the directory is gone: another run's sweep
	// does not judge it meanwhile.
	defer f.Close()
	if !ownerDead(f) {
		return false
	}
	return os.RemoveAll(path) == nil
}

// ownerDead reports whether the run that wrote pid file f is dead.
func ownerDead(f *os.File) bool {
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		return true
	case errors.Is(err, unix.EWOULDBLOCK):
		return false
	}
	// No flock on this file system: the pid decides.
	b := make([]byte, 32)
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return false
	}
	err = unix.Kill(pid, 0)
	return errors.Is(err, unix.ESRCH)
}
