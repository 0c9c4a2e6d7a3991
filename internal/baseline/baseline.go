// Package baseline is the store of baselines: a directory of Result files,
// one per scenario and target, that later runs are compared with. Writes
// are atomic, and a file that cannot be read is an error, never silently
// replaced.
//
// Save holds the store's lock, an flock(2) on DIR/.tailgate.lock, from the
// checks of the files it replaces to the last write: two tailgates saving
// into one store take turns, and the second is told it waits
// (SaveOptions.Waiting). The lock file is removed when Save ends.
//
// A store is written as root often writes it, by a CI job, and may hold
// what a pull request merged: a symlink in it is never followed. The lock
// and the baselines are opened with O_NOFOLLOW (safefile), a stored
// baseline that is a symlink is refused (ErrLink), and a planted symlink
// on the way to the store (safefile.ErrPlantedLink) too.
//
// The temporaries of atomic writes (".NAME.tmp-PID-RANDOM", see
// result.WriteFileAtomic) are never read as baselines; Save and Load remove
// the ones whose writer is gone.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// Errors a caller can test for.
var (
	// ErrNotFound reports that no baseline is stored for a scenario and
	// target.
	ErrNotFound = errors.New("no baseline stored")
	// ErrRefused reports a Result that is not stored as a baseline: partial,
	// empty, or two scenarios that map to one file.
	ErrRefused = errors.New("not stored as a baseline")
	// ErrEmpty reports a baseline scenario without measurements: no
	// trials, or no metrics. Every comparison with it would pass.
	ErrEmpty = errors.New("no measurements")
	// ErrLink reports a stored baseline, or the store's lock, that is a
	// symlink or not a regular file: never followed, read or replaced.
	ErrLink = errors.New("not a regular file")
	// ErrNotStore reports a baseline directory that cannot be one: a file,
	// a path under a file, a symlink loop.
	ErrNotStore = errors.New("not a baseline directory")
)

// Check returns an error wrapping ErrEmpty for the first scenario of r that
// has no trials, no metrics or a metric without trials: a baseline that
// would pass every gate.
func Check(r *result.Result) error {
	for _, s := range r.Scenarios {
		switch {
		case s.Trials <= 0:
			return fmt.Errorf("%w: scenario %s has %d trials", ErrEmpty, s.Name, s.Trials)
		case len(s.Metrics) == 0:
			return fmt.Errorf("%w: scenario %s has no metrics", ErrEmpty, s.Name)
		}
		for name, m := range s.Metrics {
			if len(m.Trials) == 0 {
				return fmt.Errorf("%w: scenario %s metric %s has no trials", ErrEmpty, s.Name, name)
			}
		}
	}
	return nil
}

// Entry is one stored baseline.
type Entry struct {
	Path   string
	Result *result.Result // holds the one scenario the entry is for
}

// Scenario returns the entry's scenario.
func (e *Entry) Scenario() *result.Scenario {
	if len(e.Result.Scenarios) == 0 {
		return nil
	}
	return &e.Result.Scenarios[0]
}

// FileName is the name a baseline of scenario on target with kernel release
// kernel is stored under: "<scenario>@<target>-<kernel>.json", each part
// reduced to characters safe in a file name.
func FileName(scenario, target, kernel string) string {
	return sanitize(scenario) + "@" + sanitize(target) + "-" + sanitize(kernel) + ".json"
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	if b[0] == '.' {
		b[0] = '_' // no hidden files, no ".."
	}
	return string(b)
}

// SaveOptions controls SaveWith.
type SaveOptions struct {
	// ReplaceUnreadable replaces a stored file that cannot be parsed
	// (corrupt, truncated, a newer schema). Without it Save refuses.
	ReplaceUnreadable bool
	// Waiting, if set, is called once when another process holds the
	// store's lock, before Save waits for it.
	Waiting func(LockWait)
	// Wait is how long Save waits for the lock, safefile.DefaultLockWait
	// when 0; past it, or once the context ends, it fails with a
	// *safefile.LockError naming the holder, and writes nothing.
	Wait time.Duration
}

// LockWait describes the lock a Save waits for.
type LockWait struct {
	Lock   string // the lock file
	Holder safefile.Holder
}

// Save stores each scenario of r as its own baseline file in dir, creating
// dir if needed, and returns the paths written. See SaveWith.
func Save(dir string, r *result.Result) ([]string, error) {
	return SaveWith(context.Background(), dir, r, SaveOptions{})
}

// SaveWith is Save with options. Every file it would replace is checked
// before any is written, so a refusal writes nothing; each write is atomic
// (a temporary file renamed into place), so a failure leaves the old file
// whole.
func SaveWith(ctx context.Context, dir string, r *result.Result, opt SaveOptions) ([]string, error) {
	if r.Partial {
		return nil, fmt.Errorf("%w: the result is partial (%s)", ErrRefused, r.Error)
	}
	if len(r.Scenarios) == 0 {
		return nil, fmt.Errorf("%w: the result has no scenarios", ErrRefused)
	}
	if err := Check(r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if _, err := safefile.Resolve(dir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotStore, err)
	}
	if err := safefile.MkdirAll(dir, 0o755); err != nil {
		var why error
		switch st, serr := os.Stat(dir); {
		case serr == nil && !st.IsDir():
			why = errors.New("it is a file")
		case errors.Is(serr, syscall.ELOOP), errors.Is(serr, syscall.ENOTDIR):
			why = unwrapPath(serr)
		case errors.Is(err, syscall.ENOTDIR):
			why = unwrapPath(err)
		default:
			return nil, fmt.Errorf("baseline directory: %w", err)
		}
		return nil, fmt.Errorf("%w: %s: %v; name a directory, new or holding baselines", ErrNotStore, dir, why)
	}
	unlock, err := lockStore(ctx, dir, opt.Wait, opt.Waiting)
	if err != nil {
		return nil, fmt.Errorf("lock the baseline directory: %w", err)
	}
	defer unlock()
	result.RemoveStaleTemps(dir) // best effort: a leftover is harmless
	type job struct {
		path string
		r    *result.Result
	}
	var jobs []job
	for _, s := range r.Scenarios {
		one := *r
		one.Scenarios = []result.Scenario{s}
		path := filepath.Join(dir, FileName(s.Name, r.Target.Name, r.Environment.KernelRelease))
		if slices.ContainsFunc(jobs, func(j job) bool { return j.path == path }) {
			return nil, fmt.Errorf("%w: two scenarios map to the file %s; rename one", ErrRefused, path)
		}
		if st, err := os.Lstat(path); err == nil {
			if err := storedFile(path, st); err != nil {
				return nil, err
			}
			if _, err := result.LoadNoFollow(path); err != nil && !opt.ReplaceUnreadable {
				return nil, fmt.Errorf("refusing to replace unreadable baseline: %w; move it away, or replace it deliberately (tailgate baseline save --replace-unreadable)", err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		jobs = append(jobs, job{path, &one})
	}
	var written []string
	for _, j := range jobs {
		b, err := result.Marshal(j.r)
		if err == nil {
			// NoFollow: a link put there after the check above is
			// replaced, not written through.
			err = safefile.Write(j.path, b, safefile.Options{NoFollow: true})
		}
		if err != nil {
			return written, fmt.Errorf("write baseline %s: %w", j.path, err)
		}
		written = append(written, j.path)
	}
	return written, nil
}

// Load returns the baseline of scenario for the target named target. path
// is a baseline directory or a single Result file. In a directory, a
// baseline taken on kernel release kernel is preferred; failing that, the
// most recent one for the target. A stored file that cannot be read is an
// error naming it (wrapping result.ErrCorrupt or result.ErrFutureSchema),
// and no baseline at all is ErrNotFound.
func Load(path, scenario, target, kernel string) (*Entry, error) {
	// The path the user named: their own links are followed, a planted one
	// is not.
	if _, err := safefile.Resolve(path); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w for %s on %s: %s does not exist", ErrNotFound, scenario, target, path)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		r, err := result.Load(path)
		if err != nil {
			return nil, err
		}
		s := r.Find(scenario)
		if s == nil {
			return nil, fmt.Errorf("%w for %s: %s holds no such scenario", ErrNotFound, scenario, path)
		}
		return checked(&Entry{Path: path, Result: only(r, s)})
	}
	prefix := sanitize(scenario) + "@" + sanitize(target) + "-"
	result.RemoveStaleTemps(path) // best effort: the store may be read-only
	names, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var best *Entry
	for _, d := range names {
		if d.IsDir() || result.IsTemp(d.Name()) || !strings.HasPrefix(d.Name(), prefix) || !strings.HasSuffix(d.Name(), ".json") {
			continue
		}
		p := filepath.Join(path, d.Name())
		if err := storedEntry(p, d); err != nil {
			return nil, err
		}
		r, err := result.LoadNoFollow(p)
		if err != nil {
			return nil, err
		}
		s := r.Find(scenario)
		if s == nil || r.Target.Name != target {
			continue // a sanitized name that collides with ours
		}
		e := &Entry{Path: p, Result: only(r, s)}
		switch {
		case best == nil:
			best = e
		case (r.Environment.KernelRelease == kernel) != (best.Result.Environment.KernelRelease == kernel):
			if r.Environment.KernelRelease == kernel {
				best = e
			}
		case r.Finished.After(best.Result.Finished):
			best = e
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w for %s on %s in %s", ErrNotFound, scenario, target, path)
	}
	return checked(best)
}

// checked returns e, or an error naming its file when it holds no
// measurements.
func checked(e *Entry) (*Entry, error) {
	if err := Check(e.Result); err != nil {
		return nil, fmt.Errorf("%s: %w; store a complete run over it (tailgate baseline save RESULT DIR)", e.Path, err)
	}
	return e, nil
}

// only returns r cut down to scenario s.
func only(r *result.Result, s *result.Scenario) *result.Result {
	one := *r
	one.Scenarios = []result.Scenario{*s}
	return &one
}

// List returns every baseline under path (a directory or a single Result
// file), one entry per scenario, sorted by scenario, target and kernel.
// Files that cannot be read are returned as one joined error beside the
// entries that could.
func List(path string) ([]Entry, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	var errs []error
	if st.IsDir() {
		files = nil
		names, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, d := range names {
			// Dot files are temporaries of writes and the lock.
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") && !strings.HasPrefix(d.Name(), ".") && !result.IsTemp(d.Name()) {
				p := filepath.Join(path, d.Name())
				if err := storedEntry(p, d); err != nil {
					errs = append(errs, err)
					continue
				}
				files = append(files, p)
			}
		}
	}
	var entries []Entry
	for _, f := range files {
		load := result.LoadNoFollow
		if f == path {
			load = result.Load // the file the user named
		}
		r, err := load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range r.Scenarios {
			entries = append(entries, Entry{Path: f, Result: only(r, &r.Scenarios[i])})
		}
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		return strings.Compare(sortKey(a), sortKey(b))
	})
	return entries, errors.Join(errs...)
}

func sortKey(e Entry) string {
	return e.Result.Scenarios[0].Name + "\x00" + e.Result.Target.Name + "\x00" + e.Result.Environment.KernelRelease + "\x00" + e.Path
}

// unwrapPath drops the operation and path of a *fs.PathError, for messages
// that name the path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// storedEntry refuses the directory entry d at path when it is not a
// regular file: a symlink merged into a committed store would make a
// reader read, and a refresh job replace, whatever it points at.
func storedEntry(path string, d fs.DirEntry) error {
	if d.Type().IsRegular() {
		return nil
	}
	st, err := d.Info()
	if err != nil {
		return err
	}
	return storedFile(path, st)
}

// storedFile refuses a stored file of status st that is not a regular
// file, naming path and what to do.
func storedFile(path string, st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symlink; a stored baseline must be a file: remove the link, or copy the file it points to in its place", ErrLink, path)
	default:
		return fmt.Errorf("%w: %s is a %v; a stored baseline must be a file: remove it", ErrLink, path, m.Type())
	}
}
