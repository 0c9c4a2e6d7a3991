package sysctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// A journal keeps the values Apply replaced on disk for as long as they are
// replaced, so that a run killed before it could restore them (SIGKILL, a
// power cut of the process) leaves the next run what to put back. It is
// written atomically (a temporary file renamed into place) before the
// first write to /proc/sys and removed once every value is back. Its
// process holds a flock on it while it lives: a journal that can be
// locked is one whose run died. A journal names the keys its run holds:
// while it lives, no other run writes them. A journal that cannot be
// replayed is set aside, never left to fail every later run.

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
	// Set are the values the run wrote, so that a key the kernel changes
	// by itself is not taken for one still changed; older journals have
	// none.
	Set []Setting `json:"set,omitempty"`
}

type journal struct {
	path string
	lock *os.File
}

// lockName is the file whose flock serializes, within a journal
// directory, the writing of journals with the check of the keys the live
// ones hold, and the replay of dead ones.
const lockName = ".lock"

// setAsidePrefix starts the name a journal that could not be replayed is
// renamed to: it is kept, for whoever restores its values by hand, and
// never read again.
const setAsidePrefix = "unrestored-"

// openJournalDir makes dir (mode 0700) if it is missing and checks that it
// is a directory of this user's that no one else can write: a journal
// planted by another user must not choose what root writes to /proc/sys.
// It returns the directory's lock, held exclusively.
func openJournalDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("sysctl journal: %s is not a directory of this user's that only it can write; remove it", dir)
	}
	f, err := safefile.OpenNoFollow(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sysctl journal: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sysctl journal: lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// BusyError is a key another live tailgate run holds in its journal: a
// run that saved the value it found would save that run's, and could put
// it back after that run had restored its own.
type BusyError struct {
	Key     string
	PID     int
	Journal string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("sysctl %s is set by another tailgate run (pid %d, journal %s) until it ends; run one at a time on this machine", e.Key, e.PID, e.Journal)
}

// writeJournal writes the journal of saved (what set replaces), locked,
// into dir, unless another live run's journal holds one of its keys (a
// *BusyError).
func writeJournal(dir, root string, saved, set []Setting) (*journal, error) {
	dirLock, err := openJournalDir(dir)
	if err != nil {
		return nil, err
	}
	defer dirLock.Close()
	if err := checkBusy(dir, root, saved); err != nil {
		return nil, err
	}
	b, err := json.Marshal(journalDoc{Root: filepath.Clean(root), PID: os.Getpid(), Settings: saved, Set: set})
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
	syncDir(dir)
	return &journal{path: path, lock: f}, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// checkBusy returns a *BusyError for the first key of saved that the
// journal of another live run under root holds. This process's own
// journals are its business (a sliced variant keeps one while another
// variant of the same gate runs). Journals of dead runs are Recover's.
func checkBusy(dir, root string, saved []Setting) error {
	want := map[string]bool{}
	for _, s := range saved {
		if r, err := rel(s.Key); err == nil {
			want[r] = true
		}
	}
	for _, path := range journals(dir) {
		doc, live := liveJournal(path)
		if !live || doc.PID == os.Getpid() || doc.Root != filepath.Clean(root) {
			continue
		}
		for _, s := range doc.Settings {
			if r, err := rel(s.Key); err == nil && want[r] {
				return &BusyError{Key: s.Key, PID: doc.PID, Journal: path}
			}
		}
	}
	return nil
}

// journals lists the journals in dir.
func journals(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), journalPrefix) && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// liveJournal reads the journal at path when a live run holds its lock.
func liveJournal(path string) (journalDoc, bool) {
	f, err := safefile.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return journalDoc{}, false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
		return journalDoc{}, false // its run is dead, or it is not a journal to lock
	}
	doc, err := readJournal(f)
	return doc, err == nil
}

// readJournal reads and decodes the journal open in f.
func readJournal(f *os.File) (journalDoc, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxJournal+1))
	var doc journalDoc
	if err == nil && len(b) > maxJournal {
		err = fmt.Errorf("larger than %d bytes", maxJournal)
	}
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	return doc, err
}

// remove removes the journal: every value is back.
func (j *journal) remove() {
	os.Remove(j.path)
	j.lock.Close()
}

// release leaves the journal for the next Recover: a value is still wrong.
func (j *journal) release() { j.lock.Close() }

// Recovery is what Recover did.
type Recovery struct {
	// Restored are the values put back, each with the run that left it
	// changed.
	Restored []Restored
	// SetAside are the journals that could not be replayed.
	SetAside []SetAside
}

// Restored is a value put back from the journal of a run that died.
type Restored struct {
	Setting Setting
	PID     int
}

// SetAside is a journal of a run that died that Recover could not
// replay: unreadable, or naming values the kernel would not take back.
// It is renamed (unrestored-NAME) and never read again, so that it blocks
// no later run; Err says what is left to do by hand.
type SetAside struct {
	Journal string // where it is now
	PID     int
	Err     error // a *RestoreError naming each value left changed, or why it could not be read
}

func (s SetAside) Error() string {
	return fmt.Sprintf("the sysctl journal of a tailgate run that died (pid %d) could not be replayed: %v; it is set aside as %s: remove it once that is done", s.PID, s.Err, s.Journal)
}

// Recover restores the values in the journals of runs that died with
// parameters under root changed, last applied first, and removes each
// journal whose values are all back; a journal it cannot replay is set
// aside (Recovery.SetAside) and never blocks a later run. Journals of
// live runs are left alone. Its error is the journal directory's: one
// another user could write, or that cannot be read.
func Recover(root string) (Recovery, error) {
	var rec Recovery
	dir := JournalDir(root)
	// None there, or none this user could have written: nothing of its
	// runs to put back.
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return rec, nil
	}
	dirLock, err := openJournalDir(dir)
	if err != nil {
		return rec, err
	}
	defer dirLock.Close()
	for _, path := range journals(dir) {
		recoverJournal(path, root, &rec)
	}
	return rec, nil
}

// SetAsideJournals lists the journals under root's journal directory that
// a Recover set aside.
func SetAsideJournals(root string) []string {
	out, _ := filepath.Glob(filepath.Join(JournalDir(root), setAsidePrefix+journalPrefix+"*.json"))
	return out
}

// recoverJournal restores the journal at path if its run is dead, adding
// to rec what it restored or the journal it set aside.
func recoverJournal(path, root string, rec *Recovery) {
	f, err := safefile.OpenNoFollow(path, os.O_RDWR, 0)
	if err != nil {
		return // gone meanwhile
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return // its run is alive
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Nlink == 0 {
		return // replayed by another run while this one waited
	}
	pid := pidOf(path)
	setAside := func(why error) {
		to := filepath.Join(filepath.Dir(path), setAsidePrefix+filepath.Base(path))
		if err := os.Rename(path, to); err != nil {
			to = path
			why = errors.Join(why, fmt.Errorf("and it could not be set aside: %w", err))
		}
		rec.SetAside = append(rec.SetAside, SetAside{Journal: to, PID: pid, Err: why})
	}
	doc, err := readJournal(f)
	if err != nil {
		setAside(fmt.Errorf("it is unreadable (%v); restore the values it names by hand", err))
		return
	}
	if doc.PID > 0 {
		pid = doc.PID
	}
	if doc.Root != filepath.Clean(root) {
		return
	}
	var re RestoreError
	for i := len(doc.Settings) - 1; i >= 0; i-- {
		s := doc.Settings[i]
		if _, err := rel(s.Key); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
			continue
		}
		if cur, err := Read(root, s.Key); err == nil && cur == normalize(s.Value) {
			continue // the run died before changing it, or after restoring it
		}
		if err := putBack(root, s, setIn(doc.Set, s.Key)); err != nil {
			re.Failed = append(re.Failed, Failure{Setting: s, Err: err})
			continue
		}
		rec.Restored = append(rec.Restored, Restored{Setting: s, PID: pid})
	}
	if len(re.Failed) > 0 {
		setAside(&re)
		return
	}
	os.Remove(path)
}

// setIn is the value set gives key, "" when none.
func setIn(set []Setting, key string) string {
	for _, s := range set {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// pidOf reads the pid from a journal's name, sysctl-PID-RANDOM.json; 0
// when there is none.
func pidOf(path string) int {
	rest := strings.TrimPrefix(filepath.Base(path), journalPrefix)
	p, _, _ := strings.Cut(rest, "-")
	n, _ := strconv.Atoi(p)
	return n
}
