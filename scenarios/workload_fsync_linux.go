//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/blockdev"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// fsyncLoad is the fsync kind: each thread overwrites the first size bytes
// of a file of its own with pwrite and fdatasyncs it, until the run ends;
// with device scratch, the first size bytes of its region of the scratch
// device, with O_DIRECT, and fdatasyncs the device.
// The blocks are written once when the file is made, so an fdatasync has
// only data to write (and the disk's cache to flush): no block allocation,
// no journal commit of the file's size.
type fsyncLoad struct {
	size  int
	dir   string // the directory made for the run, removed at close; "" when the scenario's
	files []*os.File
	// dev is the scratch device (device: scratch), written by every
	// thread at its own region; nil in file mode.
	dev  *blockdev.Device
	nthr int
}

func newFsyncKind(w Workload, _ int) (kindLoad, error) {
	p := *w.Params.(*Fsync)
	if p.Device == FsyncDeviceScratch {
		return newScratchLoad(w.Threads, p.Size, p)
	}
	l, err := newFsyncLoad(w.Threads, p.Size, p)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// newScratchLoad opens the scratch device: the disk of serial
// ScratchSerial where there is one (a VM's), else a loop device over a
// file in p.Dir (DefaultFsyncParent if empty).
func newScratchLoad(threads, size int, p Fsync) (*fsyncLoad, error) {
	need := int64(threads) * ScratchRegion(size)
	dev, found, err := blockdev.BySerial(ScratchSerial)
	if err != nil {
		return nil, fmt.Errorf("fsync device scratch: %w", err)
	}
	if !found {
		dir := p.Dir
		if dir == "" {
			dir = DefaultFsyncParent
		}
		dev, err = blockdev.Loop(dir, need)
		if errors.Is(err, blockdev.ErrNoLoop) {
			return nil, &UnavailableError{Err: fmt.Errorf("fsync device scratch: %w", err)}
		}
		if err != nil {
			return nil, fmt.Errorf("fsync device scratch: %w", err)
		}
	}
	if dev.Size < need {
		dev.Close()
		return nil, fmt.Errorf("fsync device scratch: %s has %d bytes, %d threads of %d need %d", dev.Name, dev.Size, threads, size, need)
	}
	if size%dev.BlockSize != 0 {
		dev.Close()
		return nil, fmt.Errorf("fsync device scratch: size %d is not a multiple of %s's logical block size %d; set size to a multiple of it", size, dev.Name, dev.BlockSize)
	}
	return &fsyncLoad{size: size, dev: dev, nthr: threads}, nil
}

// device describes the scratch device for the Result; nil in file mode.
func (l *fsyncLoad) device() *result.Device {
	if l.dev == nil {
		return nil
	}
	d := &result.Device{Kind: l.dev.Kind, Name: l.dev.Name, SizeBytes: l.dev.Size, DirectIO: l.dev.DirectIO}
	if d.Kind == blockdev.KindSerial && l.dev.Driver == "virtio_blk" {
		d.Kind = result.DeviceVirtioBlk
	}
	return d
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

func (l *fsyncLoad) threads() int {
	if l.dev != nil {
		return l.nthr
	}
	return len(l.files)
}

func (l *fsyncLoad) run(ctx context.Context) (Stats, error) {
	if l.files == nil && l.dev == nil {
		return Stats{}, ErrClosed
	}
	st, err := runCrew(ctx, 0, l.threads(), l.thread, nil)
	st.Device = l.device()
	return st, err
}

func (l *fsyncLoad) thread(i int, c *crew, m *member) {
	var fd int
	var base int64
	var buf []byte
	if l.dev != nil {
		// O_DIRECT wants an aligned buffer: an mmap'd one is a page's.
		b, err := unix.Mmap(-1, 0, int(ScratchRegion(l.size)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		m.sys["mmap"]++
		if err != nil {
			m.err = fmt.Errorf("fsync: mmap: %w", err)
			return
		}
		defer func() {
			m.sys["munmap"]++
			unix.Munmap(b)
		}()
		fd, base, buf = int(l.dev.File.Fd()), int64(i)*ScratchRegion(l.size), b[:l.size]
	} else {
		fd, buf = int(l.files[i].Fd()), make([]byte, l.size)
	}
	for !c.stop.Load() {
		buf[0]++
		for off := 0; off < len(buf); {
			n, err := unix.Pwrite(fd, buf[off:], base+int64(off))
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

// close removes the files, and the directory the load made, or closes
// the scratch device (a loop device goes with it).
func (l *fsyncLoad) close() error {
	var errs []error
	if l.dev != nil {
		errs = append(errs, l.dev.Close())
		l.dev = nil
	}
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
