package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// lockFile serializes a directory store's writers (flock, exclusive) and
// keeps its readers off a half-applied change (shared).
const lockFile = ".lock"

// dirStore is a store in a directory: what an Actions cache or an
// artifact holds, or a checkout of the store's branch.
type dirStore struct{ dir string }

type dirSnapshot struct {
	dir  string
	lock *os.File
}

// lock takes the store's lock (unix.LOCK_SH or LOCK_EX), waiting while
// another process holds it until ctx ends (SIGINT, SIGTERM) or
// safefile.DefaultLockWait has passed: then a *safefile.LockError names
// the holder.
func (d *dirStore) lock(ctx context.Context, how int, create bool) (*os.File, error) {
	path := filepath.Join(d.dir, lockFile)
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := safefile.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	if err := safefile.Lock(ctx, f, how, 0, nil); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (d *dirStore) snapshot(ctx context.Context) (snapshot, error) {
	st, err := os.Stat(d.dir)
	if err != nil {
		return nil, fmt.Errorf("history store %s: %w", d.dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: history store %s is not a directory", ErrBadInput, d.dir)
	}
	lk, err := d.lock(ctx, unix.LOCK_SH, false)
	if errors.Is(err, fs.ErrNotExist) {
		// Never written: nothing can be half applied.
		return &dirSnapshot{dir: d.dir}, nil
	}
	if err != nil {
		return nil, err
	}
	return &dirSnapshot{dir: d.dir, lock: lk}, nil
}

func (d *dirStore) update(ctx context.Context, msg string, fn func(snapshot) (*change, error)) error {
	if err := safefile.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	lk, err := d.lock(ctx, unix.LOCK_EX, true)
	if err != nil {
		return err
	}
	defer lk.Close() // closing releases the lock
	if err := ctx.Err(); err != nil {
		return err
	}
	ch, err := fn(&dirSnapshot{dir: d.dir})
	if err != nil || ch == nil {
		return err
	}
	names := make([]string, 0, len(ch.put))
	for name := range ch.put {
		names = append(names, name)
	}
	// The index last: it must never list a record not yet written.
	slices.SortFunc(names, func(a, b string) int {
		if (a == IndexFile) != (b == IndexFile) {
			if a == IndexFile {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		path := filepath.Join(d.dir, filepath.FromSlash(name))
		if err := safefile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := safefile.Write(path, ch.put[name], safefile.Options{NoFollow: true}); err != nil {
			return err
		}
	}
	for _, name := range ch.del {
		path := filepath.Join(d.dir, filepath.FromSlash(name))
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		os.Remove(filepath.Dir(path)) // the commit's directory, once empty
	}
	return nil
}

func (s *dirSnapshot) read(name string) ([]byte, error) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return nil, fmt.Errorf("%q: %w: a path outside the store", name, ErrCorrupt)
	}
	path := filepath.Join(s.dir, filepath.FromSlash(name))
	f, err := safefile.OpenNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, safefile.ErrSymlink) {
		return nil, fmt.Errorf("%w; a store's files are never links", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrCorrupt)
	}
	if st.Size() > result.MaxSize+1<<20 {
		return nil, fmt.Errorf("%s: %w: %d bytes", path, result.ErrTooLarge, st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, err
	}
	return b, nil
}

func (s *dirSnapshot) list(dir string) ([]string, error) {
	root := filepath.Join(s.dir, filepath.FromSlash(dir))
	var out []string
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == root {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if de.IsDir() || result.IsTemp(de.Name()) {
			return nil
		}
		rel, err := filepath.Rel(s.dir, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}

func (s *dirSnapshot) sizes(dir string) (map[string]int64, error) {
	root := filepath.Join(s.dir, filepath.FromSlash(dir))
	out := map[string]int64{}
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == root {
			return filepath.SkipDir
		}
		if err != nil || de.IsDir() {
			return err
		}
		info, err := de.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		rel, err := filepath.Rel(s.dir, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = info.Size()
		return nil
	})
	return out, err
}

func (s *dirSnapshot) close() error {
	if s.lock == nil {
		return nil
	}
	return s.lock.Close()
}
