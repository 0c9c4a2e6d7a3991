package vm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Checkpoints in virtual time (docs/vms.md, "Snapshots"). A boot that
// saves its state for more trials stops at one instruction of its own,
// once its tracers are attached and its workload made; the host saves the
// VM's state there, and every trial of its layout resumes from it, each
// in a QEMU of its own given a phase seed of its own.
//
// Both ends are synchronous with the guest's instruction stream: the
// guest stops itself (an OUT to QEMU's pvpanic device, which pauses the
// VM after the instruction), and it reads its phase seed after the stop
// from QEMU's fw_cfg device, by port I/O too. Anything timed by the host
// would land at a different guest instruction each time: with sleep=off
// an idle guest's clock jumps to its next timer as fast as the host goes.
//
// One race is left, inside QEMU: between the vCPU's stop and the main
// loop's stopping the VM, the main loop may see every vCPU idle and move
// the clock on to the next timer's deadline (icount_start_warp_timer).
// Whether it does is the host's scheduling; where it moves the clock to is
// not: the next deadline is the guest's own. So the guest takes the stop
// that moved its clock as the checkpoint, and a stop that did not as
// nothing (the VM paused between two instructions, its clock untouched)
// and stops again. It tells the two apart by the instructions between two
// reads of its time-stamp counter around the OUT, against the same around
// an OUT to a port that does nothing. The host saves the state at every
// stop, so the last state it saved is the checkpoint's.

// The guest's ports.
const (
	// pvpanicPort is QEMU's ISA pvpanic device (-device pvpanic).
	pvpanicPort = 0x505
	// pvpanicPanicked pauses the VM (-action panic=pause);
	// pvpanicCrashLoaded only raises an event (GUEST_CRASHLOADED), which
	// the guest sends when its stop jumped.
	pvpanicPanicked    = 1
	pvpanicCrashLoaded = 2
	// idlePort is the port of the PC's POST codes, which QEMU's pc machine
	// takes and ignores: the guest's stop without a stop.
	idlePort = 0x80
	// fwCfgPort is fw_cfg's selector (16 bits); the byte after it, its data.
	fwCfgPort = 0x510
	// fwCfgFileDir selects fw_cfg's directory of named files.
	fwCfgFileDir = 0x19
)

// phaseFile is the fw_cfg file of a resuming QEMU's phase seed, 16 hex
// digits: of one size for every seed, so that every QEMU of a layout has
// the same fw_cfg files at the same keys.
const phaseFile = "opt/tailgate/phase"

// phaseArg is QEMU's option that gives the guest phase seed seed.
func phaseArg(seed uint64) string {
	return fmt.Sprintf("name=%s,string=%016x", phaseFile, seed)
}

// maxStops bounds the guest's stops at one checkpoint. A stop moved the
// clock in 12 of 12 boots of a quiet host and in about one of three under
// load (BENCHMARKS.md, "Snapshots in virtual time").
const maxStops = 12

// ErrStopStill: none of the guest's maxStops stops at its checkpoint
// moved its clock to its next timer (the race above), so the boot has no
// checkpoint its seed gives, and is booted again.
var ErrStopStill = errors.New("no stop of the guest moved its clock to its next timer")

// Checkpoint, in a guest whose request asks for it (GuestRequest.
// Checkpoint), stops the VM for the host to save its state, then reads
// the phase seed of the QEMU that resumes it (the same one, or one
// restoring the state) and sleeps its start phase (PhaseOf) in guest
// time. It returns the phase seed. When no stop moved its clock, it tells
// the host, which kills the VM: Checkpoint then does not return.
func Checkpoint(ctx context.Context) (uint64, error) {
	for _, p := range [][2]int{{pvpanicPort, 1}, {idlePort, 1}, {fwCfgPort, 2}} {
		if err := openPorts(p[0], p[1]); err != nil {
			return 0, fmt.Errorf("checkpoint: ioperm %#x: %w", p[0], err)
		}
	}
	for stop := 1; ; stop++ {
		idleBefore, idleAfter := outbTimed(idlePort, 0)
		before, after := outbTimed(pvpanicPort, pvpanicPanicked)
		if after-before != idleAfter-idleBefore {
			break
		}
		if stop == maxStops {
			outb(pvpanicPort, pvpanicCrashLoaded)
			// The host kills the VM at the event; the deadline, if it
			// does not.
			<-ctx.Done()
			return 0, fmt.Errorf("checkpoint: %w in %d stops", ErrStopStill, stop)
		}
	}
	raw, err := readFwCfg(phaseFile, 16)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	seed, err := strconv.ParseUint(string(raw), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: fw_cfg %s: %q is no phase seed", phaseFile, raw)
	}
	t := time.NewTimer(PhaseOf(seed))
	defer t.Stop()
	select {
	case <-t.C:
		return seed, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// readFwCfg reads fw_cfg's file name, of at most limit bytes, by port I/O:
// the directory (a big-endian count, then 64-byte entries of size, key,
// reserved and name), then the file's key.
func readFwCfg(name string, limit int) ([]byte, error) {
	outw(fwCfgPort, fwCfgFileDir)
	var hdr [4]byte
	readPort(hdr[:])
	n := binary.BigEndian.Uint32(hdr[:])
	for range min(n, 4096) {
		var e [64]byte
		readPort(e[:])
		size, key := binary.BigEndian.Uint32(e[0:4]), binary.BigEndian.Uint16(e[4:6])
		if nameOf(e[8:]) != name {
			continue
		}
		if size > uint32(limit) {
			return nil, fmt.Errorf("fw_cfg %s: %d bytes, want at most %d", name, size, limit)
		}
		outw(fwCfgPort, key)
		b := make([]byte, size)
		readPort(b)
		return b, nil
	}
	return nil, fmt.Errorf("no fw_cfg file %s (was QEMU given -fw_cfg %s?)", name, phaseArg(0))
}

// readPort fills b from fw_cfg's data port.
func readPort(b []byte) {
	for i := range b {
		b[i] = inb(fwCfgPort + 1)
	}
}

// nameOf is a NUL-terminated name.
func nameOf(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
