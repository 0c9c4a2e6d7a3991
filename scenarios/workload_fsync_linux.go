//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fsyncLoad is the fsync kind: each thread overwrites the first size bytes
// of a file of its own with pwrite and fdatasyncs it, until the run ends.
// The blocks are written once when the file is made, so an fdatasync has
// only data to write (and the disk's cache to flush): no block allocation,
// no journal commit of the file's size.
type fsyncLoad struct {
	size  int
	dir   string // the directory made for the run, removed at close; "" when the scenario's
	files []*os.File
}

func newFsyncKind(w Workload, _ int) (kindLoad, error) {
	l, err := newFsyncLoad(w.Threads, w.Size, *w.Params.(*Fsync))
	if err != nil {
		return nil, err
	}
	return l, nil
}

func newFsyncLoad(threads, size int, p Fsync) (_ *fsyncLoad, err error) {
	l := &fsyncLoad{size: size}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	dir := p.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp(DefaultFsyncParent, "tailgate-fsync-"); err != nil {
			return nil, fmt.Errorf("fsync: %w", err)
		}
		l.dir = dir
	} else if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("fsync: dir: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("fsync: dir %s is not a directory", dir)
	}
	buf := make([]byte, size)
	for range threads {
		f, err := os.CreateTemp(dir, ".tailgate-fsync-")
		if err != nil {
			return nil, fmt.Errorf("fsync: %w", err)
		}
		l.files = append(l.files, f)
		if _, err := f.WriteAt(buf, 0); err != nil {
			return nil, fmt.Errorf("fsync: %w", err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("fsync: %w", err)
		}
	}
	return l, nil
}

func (l *fsyncLoad) threads() int { return len(l.files) }

func (l *fsyncLoad) run(ctx context.Context) (Stats, error) {
	if l.files == nil {
		return Stats{}, ErrClosed
	}
	return runCrew(ctx, 0, len(l.files), l.thread, nil)
}

func (l *fsyncLoad) thread(i int, c *crew, m *member) {
	fd := int(l.files[i].Fd())
	buf := make([]byte, l.size)
	for !c.stop.Load() {
		buf[0]++
		for off := 0; off < len(buf); {
			n, err := unix.Pwrite(fd, buf[off:], int64(off))
			m.sys["pwrite64"]++
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				m.err = fmt.Errorf("fsync: pwrite64: %w", err)
				return
			}
			off += n
		}
		for {
			err := unix.Fdatasync(fd)
			m.sys["fdatasync"]++
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				m.err = fmt.Errorf("fsync: fdatasync: %w", err)
				return
			}
			break
		}
		m.ops++
	}
}

// close removes the files, and the directory the load made.
func (l *fsyncLoad) close() error {
	var errs []error
	for _, f := range l.files {
		errs = append(errs, f.Close(), os.Remove(f.Name()))
	}
	l.files = nil
	if l.dir != "" {
		errs = append(errs, os.Remove(l.dir))
		l.dir = ""
	}
	return errors.Join(errs...)
}
