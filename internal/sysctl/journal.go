package sysctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A journal keeps the values Apply replaced on disk for as long as they are
// replaced, so that a run killed before it could restore them (SIGKILL, a
// power cut of the process) leaves the next run what to put back. It is
// written atomically (a temporary file renamed into place) before the
// first write to /proc/sys and removed once every value is back. Its
// process holds a flock on it while it lives: a journal that can be
// locked is one whose run died.

// journalPrefix starts a journal's file name: sysctl-PID-RANDOM.json.
const journalPrefix = "sysctl-"

// maxJournal bounds what Recover reads of a journal.
const maxJournal = 1 << 20

// JournalDir is where the journals of the parameters under root go:
// /run/tailgate for root's /proc/sys (the user state directory, e.g.
// ~/.local/state/tailgate, for another user), and ROOT.journal beside any
// other root (tests).
func JournalDir(root string) string {
	if filepath.Clean(root) != Root {
		return filepath.Clean(root) + ".journal"
	}
	if os.Geteuid() == 0 {
		return "/run/tailgate"
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "tailgate")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "tailgate")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tailgate-%d", os.Geteuid()))
}

// journalDoc is a journal's content.
type journalDoc struct {
	Root     string    `json:"root"`
	PID      int       `json:"pid"`
	Settings []Setting `json:"settings"` // the original values, in the order applied
}

type journal struct {
	path string
	lock *os.File
}

// openJournalDir makes dir (mode 0700) if it is missing and checks that it
// is a directory of this user's that no one else can write: a journal
// planted by another user must not choose what root writes to /proc/sys.
func openJournalDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sysctl journal: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sysctl journal: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("sysctl journal: %s is not a directory of this user's that only it can write; remove it", dir)
	}
	return nil
}

// writeJournal writes the journal of saved, locked, into dir.
func writeJournal(dir, root string, saved []Setting) (*journal, error) {
	if err := openJournalDir(dir); err != nil {
		return nil, err
	}
	b, err := json.Marshal(journalDoc{Root: filepath.Clean(root), PID: os.Getpid(), Settings: saved})
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf(".%s%d-*.tmp", journalPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	fail := func(err error) (*journal, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fail(err)
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Name()), "."), ".tmp") + ".json"
	path := filepath.Join(dir, name)
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return &journal{path: path, lock: f}, nil
}

// remove removes the journal: every value is back.
func (j *journal) remove() {
	os.Remove(j.path)
	j.lock.Close()
}

// release leaves the journal for the next Recover: a value is still wrong.
func (j *journal) release() { j.lock.Close() }

// Recover restores the values in the journals of runs that died with
// parameters under root changed, last applied first, and removes each
// journal whose values are all back. It returns what it restored; its
// error is a *RestoreError naming every value it could not put back and
// the command that does, or the failure to read a journal. Journals of
// live runs are left alone.
func Recover(root string) (restored []Setting, err error) {
	dir := JournalDir(root)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	if err := openJournalDir(dir); err != nil {
		return nil, err
	}
	var re RestoreError
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), journalPrefix) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		r, err := recoverJournal(filepath.Join(dir, e.Name()), root, &re)
		restored = append(restored, r...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(re.Failed) > 0 {
		errs = append(errs, &re)
	}
	return restored, errors.Join(errs...)
}

// recoverJournal restores the journal at path if its run is dead, adding
// what it cannot put back to re.
func recoverJournal(path, root string, re *RestoreError) ([]Setting, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return nil, nil // its run is alive
	case err != nil:
		return nil, fmt.Errorf("sysctl journal %s: %w", path, err)
	}
	b := make([]byte, maxJournal+1)
	n, _ := f.Read(b)
	var doc journalDoc
	if n > maxJournal || json.Unmarshal(b[:n], &doc) != nil {
		return nil, fmt.Errorf("sysctl journal %s is unreadable; restore the values it names by hand and remove it", path)
	}
	if doc.Root != filepath.Clean(root) {
		return nil, nil
	}
	var restored []Setting
	failed := len(re.Failed)
	for i := len(doc.Settings) - 1; i >= 0; i-- {
		s := doc.Settings[i]
		if _, err := rel(s.Key); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
			continue
		}
		if cur, err := Read(root, s.Key); err == nil && cur == normalize(s.Value) {
			continue // the run died before changing it, or after restoring it
		}
		if err := write(root, s.Key, s.Value); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
			continue
		}
		restored = append(restored, s)
	}
	if len(re.Failed) == failed {
		os.Remove(path)
	}
	return restored, nil
}
