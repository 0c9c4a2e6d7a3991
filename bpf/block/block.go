// Package block is the block I/O tracer, in the manner of biolatency: for
// each request of the workload, the time from its insert into the queue to
// its issue to the driver (block.queue) and from issue to completion
// (block.rq), from the block_rq_insert, block_rq_issue and
// block_rq_complete tracepoints.
//
// A request is the workload's when one of its tasks is the current task
// where the request is first seen: at insert (the submitter's context,
// including the flush of its plug) or, for a request issued directly
// without a queue, at issue. A request another task inserted is not the
// workload's when the workload issues it (running the hardware queue, it
// dispatches what the I/O scheduler holds for everyone). What the
// workload's syscalls write besides its data is its own: on ext4 without a
// journal, an fdatasync writes the inode table block when the mtime
// changed. I/O the kernel does on its own behalf (page writeback from a
// kworker, a journal commit from jbd2) is not counted, nor are cache
// flush requests: kblockd issues most of them, and one serves every
// preflush waiting, so their issuer says little. Devices may be limited
// to a list of disks; the metrics are not split per device.
//
// The evidence of a slow request carries its submitter and, taken while
// evidence is on, the kernel stack it was submitted with (the fdatasync
// that wrote it, for example).
package block

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
)

// Metrics are the tracer's metrics, in the order of the METRIC_ indexes of
// block.h; TestMetricIndexes (bpf/tracers) fails when the two differ.
var Metrics = []string{"block.queue", "block.rq"}

// MaxDevices is the most devices the tracer may be limited to
// (BLOCK_MAX_DEVICES in block.h).
const MaxDevices = 16

// Options configure the tracer. With Evidence on, a kernel stack is taken
// for every request the workload submits. Interference is not used: a
// request's time is the device's, not a CPU's.
type Options struct {
	tracing.TracerOptions
	Variant tracing.Variant
	// Devices, when not empty, limits the tracer to these disks, named
	// as /sys/block names them (vda, loop0, nvme0n1).
	Devices []string
	// SysBlock is where the disks are listed; empty is /sys/block.
	SysBlock string
}

// ErrUnknownDevice is a device name that is not a disk of /sys/block; it
// matches tracing.ErrBadTarget too.
var ErrUnknownDevice = errors.New("no such block device")

type unknownDeviceError struct{ name string }

func (e *unknownDeviceError) Error() string {
	return fmt.Sprintf("%v %q (see ls /sys/block)", ErrUnknownDevice, e.name)
}

func (e *unknownDeviceError) Is(target error) bool {
	return target == ErrUnknownDevice || target == tracing.ErrBadTarget
}

// CheckName reports what is wrong with a device name.
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/ \t\n") {
		return fmt.Errorf("%q is not a block device name; name a disk as /sys/block lists it, e.g. vda", name)
	}
	return nil
}

// Dev returns the device number of disk name in the kernel's encoding
// (major << 20 | minor), from sysBlock/name/dev.
func Dev(sysBlock, name string) (uint32, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(sysBlock, name, "dev"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, &unknownDeviceError{name}
	}
	if err != nil {
		return 0, err
	}
	maj, min, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	ma, err1 := strconv.ParseUint(maj, 10, 12)
	mi, err2 := strconv.ParseUint(min, 10, 20)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s/%s/dev: not MAJOR:MINOR: %q", sysBlock, name, b)
	}
	return uint32(ma)<<20 | uint32(mi), nil
}

// New loads and attaches the tracer.
func New(opts Options) (*tracing.Tracer, error) {
	if len(opts.Devices) > MaxDevices {
		return nil, fmt.Errorf("block tracer: %d devices, at most %d", len(opts.Devices), MaxDevices)
	}
	sysBlock := opts.SysBlock
	if sysBlock == "" {
		sysBlock = "/sys/block"
	}
	var kvs []ebpf.MapKV
	for i, name := range opts.Devices {
		if slices.Contains(opts.Devices[:i], name) {
			return nil, fmt.Errorf("block tracer: device %q listed twice", name)
		}
		dev, err := Dev(sysBlock, name)
		if err != nil {
			return nil, fmt.Errorf("block tracer: %w", err)
		}
		kvs = append(kvs, ebpf.MapKV{Key: dev, Value: uint8(1)})
	}
	spec, err := loadBlock()
	if err != nil {
		return nil, fmt.Errorf("block tracer: %w", err)
	}
	o := opts.TracerOptions
	o.Interference = nil // a request's time is the device's, not a CPU's
	return tracing.Load(spec, tracing.Options{
		Name:          "block",
		Metrics:       Metrics,
		TracerOptions: o,
		Variant:       opts.Variant,
		Configure: func(s *ebpf.CollectionSpec) error {
			s.Maps["devices"].Contents = kvs
			if err := s.Variables["targ_dev_filter"].Set(len(kvs) > 0); err != nil {
				return fmt.Errorf("set targ_dev_filter: %w", err)
			}
			var now unix.Timespec
			if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
				return fmt.Errorf("read CLOCK_MONOTONIC: %w", err)
			}
			if err := s.Variables["targ_since"].Set(uint64(now.Nano())); err != nil {
				return fmt.Errorf("set targ_since: %w", err)
			}
			return nil
		},
	})
}
