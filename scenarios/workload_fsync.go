package scenarios

import (
	"fmt"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Fsync is the fsync workload kind's own parameters: how much each write
// is, the directory its files are written in, and whether it writes a
// block device of its own instead. Its threads are Workload's field.
//
//	workload:
//	  kind: fsync
//	  dir: /var/lib/ci  # default: a new directory under /var/tmp
//	  device: scratch   # default: file
//	  size: 4096        # bytes written before each fdatasync (default 4 KiB)
//	  threads: 1        # each with a file (or a region of the device) of its own
type Fsync struct {
	// Size is the bytes written before each fdatasync.
	Size int `json:"size,omitempty"`
	// Dir is an existing directory, on the disk to measure; empty makes
	// one under DefaultFsyncParent for the run and removes it after. With
	// Device scratch it holds the loop device's backing file (default
	// DefaultFsyncParent itself).
	Dir string `json:"dir,omitempty"`
	// Device is FsyncDeviceFile ("" means it, and is what is written, so
	// that scenarios written before the key keep their digest) or
	// FsyncDeviceScratch.
	Device string `json:"device,omitempty"`
}

// The fsync kind's devices.
const (
	// FsyncDeviceFile writes a file of each thread's in dir, on whatever
	// disk holds it.
	FsyncDeviceFile = "file"
	// FsyncDeviceScratch writes a block device of the workload's own,
	// with O_DIRECT, each thread a region of it, and fdatasyncs the
	// device: in a VM the disk whose serial is ScratchSerial, which the
	// host attaches (virtio-blk); elsewhere a loop device set up for the
	// trial over a file in dir that nobody else sees, which the kernel
	// detaches when the worker's descriptor closes, however it ends. A
	// machine without loop devices cannot run it: the error is an
	// *UnavailableError.
	FsyncDeviceScratch = "scratch"
)

var fsyncDevices = []string{FsyncDeviceFile, FsyncDeviceScratch}

// ScratchSerial is the serial of the scratch disk tailgate attaches to a
// VM whose run has a scenario with device scratch. A disk of that serial
// is tailgate's to overwrite.
const ScratchSerial = "tailgate-scratch"

// ScratchRegion is the part of the scratch device each thread writes: size
// rounded up to 4 KiB, so that every region starts on a page.
func ScratchRegion(size int) int64 { return (int64(size) + 4095) &^ 4095 }

// ScratchSize is the size of the scratch device w writes, 0 when w writes
// none: a region per thread.
func ScratchSize(w Workload) int64 {
	w = w.withDefaults()
	p, ok := w.Params.(*Fsync)
	if w.Kind != "fsync" || !ok || p == nil || p.Device != FsyncDeviceScratch {
		return 0
	}
	return int64(w.Threads) * ScratchRegion(p.Size)
}

// scratchAlign is what size must be a multiple of with device scratch:
// O_DIRECT writes whole logical blocks.
const scratchAlign = 512

// UnavailableError is a workload this machine cannot run at all: what it
// needs (loop devices) is not here. A run of every built-in passes over
// the scenario, as it does one whose tracer the kernel cannot load.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// DefaultFsyncParent is where the fsync kind makes its directory when the
// scenario names none: /var/tmp is on a disk where /tmp may be tmpfs,
// whose fdatasync reaches no device.
const DefaultFsyncParent = "/var/tmp"

// fsyncKind is the fsync workload kind: each thread overwrites the start
// of its file with size bytes and fdatasyncs it, in a loop; ops are
// fdatasyncs.
var fsyncKind = WorkloadKind{
	Name:         "fsync",
	Keys:         []string{"dir", "device", "size", "threads"},
	Parse:        parseFsync,
	DecodeParams: decodeParams[Fsync],
	Defaults: func(w *Workload) {
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
		p, ok := paramsCopy[Fsync](*w)
		if !ok {
			return
		}
		if p.Size == 0 {
			p.Size = DefaultFsyncSize
		}
		w.Params = p
	},
	Check: func(w Workload) error {
		p, err := kindParams[Fsync](w)
		if err != nil {
			return err
		}
		return firstError([]error{checkIntRange("size", p.Size, 1, maxSize),
			checkIntRange("threads", w.Threads, 1, maxThreads), p.check(), p.checkSize()})
	},
	New:      newFsyncKind,
	Syscalls: func(Workload) []string { return []string{"fdatasync"} },
}

// DefaultFsyncSize is the fsync kind's default size: one page.
const DefaultFsyncSize = 4096

func (p Fsync) check() error {
	if p.Dir != "" && !filepath.IsAbs(p.Dir) {
		return fmt.Errorf("dir must be an absolute path, got %q", p.Dir)
	}
	if p.Device != "" {
		return checkOneOf("device", p.Device, fsyncDevices)
	}
	return nil
}

// checkSize checks the size against the device: O_DIRECT writes to a
// scratch device are whole logical blocks. A size of 0 is the default's.
func (p Fsync) checkSize() error {
	if p.Device == FsyncDeviceScratch && p.Size%scratchAlign != 0 {
		return fmt.Errorf("size must be a multiple of %d with device %s (O_DIRECT writes whole blocks), got %d", scratchAlign, FsyncDeviceScratch, p.Size)
	}
	return nil
}

// parseFsync is the fsync kind's WorkloadKind.Parse.
func parseFsync(_ config.Node, fs []config.Field) (any, error) {
	p := &Fsync{}
	var deviceAt *config.Field
	for i, f := range fs {
		switch f.Key {
		case "size":
			size, err := f.Int(1, maxSize)
			if err != nil {
				return nil, err
			}
			p.Size = size
		case "dir":
			dir, err := f.String()
			if err != nil {
				return nil, err
			}
			p.Dir = dir
			if err := p.check(); err != nil {
				return nil, f.Value.Errorf("%v; the directory the file is written in, e.g. /var/tmp", err)
			}
		case "device":
			dev, err := f.String()
			if err != nil {
				return nil, err
			}
			if dev == FsyncDeviceFile {
				dev = "" // the default, written as before the key existed
			}
			p.Device, deviceAt = dev, &fs[i]
			if err := p.check(); err != nil {
				return nil, f.Value.Errorf("%v; file writes a file in dir, scratch a block device of the workload's own", err)
			}
		}
	}
	if err := p.checkSize(); err != nil && deviceAt != nil {
		// The error is put where the device is chosen, as when size
		// was read before the device.
		return nil, deviceAt.Value.Errorf("%v; make size a multiple of %d", err, scratchAlign)
	}
	return p, nil
}
