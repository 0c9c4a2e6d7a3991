//go:build linux

// Package blockdev opens block devices a workload has to itself: a loop
// device over a file nobody else can see, set up so that the kernel takes
// it down however the process ends, or a disk found by its serial (the
// scratch disk tailgate gives a VM).
//
// A loop device's backing file has no name from the start (O_TMPFILE, else
// unlinked at once) and the device is configured with LO_FLAGS_AUTOCLEAR:
// when its last file descriptor closes, at Close or when the process dies,
// even of SIGKILL, the kernel detaches it and the file's blocks are freed.
package blockdev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ControlPath is the loop driver's control device.
const ControlPath = "/dev/loop-control"

// ErrNoLoop reports that this machine has no loop devices to set up: no
// loop driver, or no /dev/loop-control.
var ErrNoLoop = errors.New("no loop devices")

// Kinds of Device.
const (
	KindLoop   = "loop"
	KindSerial = "disk" // a whole disk found by its serial
)

// Device is an open block device, O_RDWR|O_DIRECT.
type Device struct {
	File *os.File
	Kind string // KindLoop or KindSerial
	// Name is the device as /sys/block names it: loop3, vdb.
	Name string
	Size int64 // bytes
	// BlockSize is the logical block size: O_DIRECT offsets and lengths
	// are multiples of it.
	BlockSize int
	// DirectIO is set for a loop device that reads and writes its backing
	// file with direct I/O, so that its requests' latency is the disk's
	// rather than the page cache's.
	DirectIO bool
	// Driver is the disk's driver (virtio_blk) for KindSerial.
	Driver string
	// backing is the loop's backing_file as sysfs shows it while bound.
	backing string
}

// detachWait bounds how long Close waits to see a loop device detached.
const detachWait = 2 * time.Second

// Loop sets up a loop device of size bytes (a multiple of 4096) over a
// file in dir, which nobody else sees and which goes with the device. The
// file is written in full first, so that no write to the device allocates
// blocks. The device is asked to use direct I/O; Device.DirectIO says
// whether the kernel agreed. An error wrapping ErrNoLoop means the machine
// has no loop devices at all.
func Loop(dir string, size int64) (_ *Device, err error) {
	if size <= 0 || size%4096 != 0 {
		return nil, fmt.Errorf("loop device: size %d is not a positive multiple of 4096", size)
	}
	ctl, err := os.OpenFile(ControlPath, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO) {
			return nil, fmt.Errorf("%w: %v; load the loop module (modprobe loop)", ErrNoLoop, err)
		}
		return nil, fmt.Errorf("loop device: %w", err)
	}
	defer ctl.Close()
	backing, err := backingFile(dir, size)
	if err != nil {
		return nil, fmt.Errorf("loop device: backing file: %w", err)
	}
	// The device holds its own reference to the file once configured.
	defer backing.Close()

	// Another process may take the free device between the two calls:
	// LOOP_CONFIGURE then fails with EBUSY, and the next free one is tried.
	for range 16 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
				return nil, fmt.Errorf("%w: %s: LOOP_CTL_GET_FREE: %v", ErrNoLoop, ControlPath, err)
			}
			return nil, fmt.Errorf("loop device: LOOP_CTL_GET_FREE: %w", err)
		}
		name := fmt.Sprintf("loop%d", n)
		dev, err := os.OpenFile("/dev/"+name, os.O_RDWR|unix.O_DIRECT, 0)
		if err != nil {
			return nil, fmt.Errorf("loop device: %w", err)
		}
		cfg := unix.LoopConfig{Fd: uint32(backing.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR | unix.LO_FLAGS_DIRECT_IO
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if errors.Is(err, unix.EINVAL) {
			// A backing file system without direct I/O.
			cfg.Info.Flags &^= unix.LO_FLAGS_DIRECT_IO
			err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		}
		if errors.Is(err, unix.EBUSY) {
			dev.Close()
			continue
		}
		if err != nil {
			dev.Close()
			return nil, fmt.Errorf("loop device %s: LOOP_CONFIGURE: %w", name, err)
		}
		d := &Device{File: dev, Kind: KindLoop, Name: name}
		if err := d.describe(); err != nil {
			d.Close()
			return nil, err
		}
		st, err := unix.IoctlLoopGetStatus64(int(dev.Fd()))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("loop device %s: LOOP_GET_STATUS64: %w", name, err)
		}
		d.DirectIO = st.Flags&unix.LO_FLAGS_DIRECT_IO != 0
		b, err := os.ReadFile(filepath.Join("/sys/block", name, "loop", "backing_file"))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("loop device %s: %w", name, err)
		}
		d.backing = strings.TrimSpace(string(b))
		return d, nil
	}
	return nil, errors.New("loop device: every free device was taken by someone else, 16 times")
}

// backingFile makes a file of size bytes in dir with no name, written in
// full and synced.
func backingFile(dir string, size int64) (*os.File, error) {
	var f *os.File
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		f = os.NewFile(uintptr(fd), filepath.Join(dir, "(tmpfile)"))
	} else {
		// A file system without O_TMPFILE: a name for a moment.
		if f, err = os.CreateTemp(dir, ".tailgate-loop-"); err != nil {
			return nil, err
		}
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return nil, err
		}
	}
	buf := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; {
		n, err := f.WriteAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil {
			f.Close()
			return nil, err
		}
		off += int64(n)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// describe reads the device's size and logical block size.
func (d *Device) describe() error {
	var size uint64
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, d.File.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); e != 0 {
		return fmt.Errorf("%s: BLKGETSIZE64: %w", d.Name, e)
	}
	bs, err := unix.IoctlGetInt(int(d.File.Fd()), unix.BLKSSZGET)
	if err != nil {
		return fmt.Errorf("%s: BLKSSZGET: %w", d.Name, err)
	}
	d.Size, d.BlockSize = int64(size), bs
	return nil
}

// BySerial opens, exclusively, the whole disk whose serial (as
// /sys/block/*/serial shows it) is serial. found is false, with no error,
// when there is none.
func BySerial(serial string) (d *Device, found bool, err error) {
	name, ok := FindSerial(serial)
	if !ok {
		return nil, false, nil
	}
	// O_EXCL on a block device: fail if it is mounted or held.
	f, err := os.OpenFile("/dev/"+name, os.O_RDWR|os.O_EXCL|unix.O_DIRECT, 0)
	if err != nil {
		return nil, true, fmt.Errorf("disk %s (serial %s): %w", name, serial, err)
	}
	d = &Device{File: f, Kind: KindSerial, Name: name}
	if l, err := os.Readlink(filepath.Join("/sys/block", name, "device", "driver")); err == nil {
		d.Driver = filepath.Base(l)
	}
	if err := d.describe(); err != nil {
		f.Close()
		return nil, true, err
	}
	return d, true, nil
}

// FindSerial returns the name of the disk whose serial is serial.
func FindSerial(serial string) (string, bool) {
	paths, _ := filepath.Glob("/sys/block/*/serial")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(string(b)) == serial {
			return filepath.Base(filepath.Dir(p)), true
		}
	}
	return "", false
}

// Close closes the device. A loop device is detached by the kernel as its
// last descriptor closes; Close waits, up to a bound, to see it go, so that
// nothing of it is left when Close returns.
func (d *Device) Close() error {
	if d.File == nil {
		return nil
	}
	err := d.File.Close()
	d.File = nil
	if d.Kind != KindLoop || d.backing == "" {
		return err
	}
	deadline := time.Now().Add(detachWait)
	for Bound(d.Name) == d.backing {
		if time.Now().After(deadline) {
			// Someone else holds it open (udev's probe, say): it is
			// detached when they close it.
			return errors.Join(err, fmt.Errorf("loop device %s still bound to %s %v after close", d.Name, d.backing, detachWait))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return err
}

// Bound returns the backing file loop device name is bound to, as sysfs
// shows it, or "" when it is not bound.
func Bound(name string) string {
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "loop", "backing_file"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
