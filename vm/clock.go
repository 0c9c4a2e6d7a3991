package vm

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// The clocks a guest runs on (Machine.Clock; result.Target.Clock records the
// one it ran on).
const (
	// ClockAuto is virtual time under TCG and real time under KVM.
	ClockAuto = "auto"
	// ClockVirtual is QEMU's instruction counter (-icount): every guest
	// clock advances 2^IcountShift ns per instruction the guest executes
	// and jumps over the time it idles, so what the guest measures
	// follows its own instruction stream, whatever else the host runs.
	// TCG only.
	ClockVirtual = result.ClockVirtual
	// ClockReal: the guest's clocks follow the host's. Under TCG that is
	// the emulator's speed, and the host's load with it.
	ClockReal = result.ClockReal
)

// Clocks are the values Machine.Clock takes.
var Clocks = []string{ClockAuto, ClockVirtual, ClockReal}

// IcountShift is the guest time of one instruction in virtual time, as a
// power of two of nanoseconds: 2^0, 1 ns, the fastest CPU icount
// emulates, so that the guest's timers (its tick, its timeouts) are as
// rare against its work as they are on hardware. A larger shift shortens
// no trial at equal events (docs/vms.md).
const IcountShift = 0

// VirtualVCPUs is the number of vCPUs of a guest in virtual time. icount
// runs the vCPUs in turn in one thread, and QEMU 7.2 gives a vCPU no turn
// while another busy-waits for it, so a second vCPU does not come up
// (docs/vms.md).
const VirtualVCPUs = 1

// virtualEpoch is the guest's wall clock at boot in virtual time: a
// fixed date, so that the guest's random pool, which mixes the time in,
// starts the same in every boot.
const virtualEpoch = "2020-01-01T00:00:00"

// virtualSeed seeds QEMU's random source for the guest (RDRAND), for the
// same reason.
const virtualSeed = "1"

// ErrClock is wrapped by the errors of a clock that cannot be had: virtual
// time under KVM, or with more than VirtualVCPUs vCPUs. A bad input.
var ErrClock = errors.New("clock")

// Setup is how a VM boots: its accelerator and why, its clock and its
// vCPUs.
type Setup struct {
	Accel, Why string
	Clock      string
	VCPUs      int
}

// ChooseSetup resolves what was asked (accel auto, kvm or tcg; clock
// auto, virtual or real, "" for auto; vcpus, 0 for the clock's default)
// into what a boot runs with. Virtual time asks for TCG: with accel auto
// it is chosen without probing KVM.
func ChooseSetup(accel, clock string, vcpus int) (Setup, error) {
	if clock == "" {
		clock = ClockAuto
	}
	switch clock {
	case ClockAuto, ClockVirtual, ClockReal:
	default:
		return Setup{}, fmt.Errorf("%w %q: want %s", ErrClock, clock, strings.Join(Clocks, ", "))
	}
	var s Setup
	var err error
	switch {
	case clock == ClockVirtual && accel == "kvm":
		return Setup{}, fmt.Errorf("%w: virtual time is QEMU's instruction counter, which runs under TCG, not KVM: drop --accel kvm or use --clock real", ErrClock)
	case clock == ClockVirtual && (accel == "" || accel == "auto"):
		s.Accel, s.Why = "tcg", "virtual time runs under TCG"
	default:
		if s.Accel, s.Why, err = chooseAccel(accel); err != nil {
			return Setup{}, err
		}
	}
	s.Clock = clock
	if clock == ClockAuto {
		s.Clock = ClockReal
		if s.Accel == "tcg" {
			s.Clock = ClockVirtual
		}
	}
	s.VCPUs = vcpus
	switch {
	case vcpus <= 0 && s.Clock == ClockVirtual:
		s.VCPUs = VirtualVCPUs
	case vcpus <= 0:
		s.VCPUs = DefaultVCPUs
	case vcpus > VirtualVCPUs && s.Clock == ClockVirtual:
		return Setup{}, fmt.Errorf("%w: %d vCPUs in virtual time: a guest in virtual time has %d (QEMU runs its vCPUs in turn, and a second does not come up); drop --vcpus, or use --clock real for %d vCPUs in real time", ErrClock, vcpus, VirtualVCPUs, vcpus)
	}
	return s, nil
}

// virtualArgs are QEMU's options of a guest in virtual time. The guest's
// time counts instructions and skips idle time (sleep=off); its wall
// clock and QEMU's random source start the same in every boot, and the
// RTC follows the guest's time. The virtio devices take their
// notifications on the vCPU's own thread (ioeventfd=off, virtioOption):
// handed to QEMU's main loop, their completions reached the guest at a
// different instruction in each boot.
func virtualArgs() []string {
	return []string{
		"-icount", fmt.Sprintf("shift=%d,sleep=off", IcountShift),
		"-rtc", "base=" + virtualEpoch + ",clock=vm",
		"-seed", virtualSeed,
	}
}

// virtioOption is what a virtio device's -device value gets on clock.
func virtioOption(clock string) string {
	if clock == ClockVirtual {
		return ",ioeventfd=off"
	}
	return ""
}

// stampVirtual puts on res what a guest in virtual time cannot say of
// itself: its boot's identity, which a guest that boots the same way each
// time draws the same (result.Merge tells trials apart by it), and when
// it ran, from the host's clock; the guest's wall clock is virtualEpoch.
func stampVirtual(res *result.Result, started, finished time.Time) {
	var b [16]byte
	rand.Read(b[:])
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	for _, s := range res.Scenarios {
		for _, m := range s.Metrics {
			for i := range m.Trials {
				m.Trials[i].BootID = id
			}
		}
	}
	res.Started, res.Finished = started.UTC(), finished.UTC()
}

var qemuVersions sync.Map // QEMU binary → its version, or an error

// qemuVersionTimeout bounds qemu --version, which a QEMU answers in
// milliseconds.
const qemuVersionTimeout = 5 * time.Second

// QEMUVersion is what qemu --version says of itself, without its
// "QEMU emulator version " prefix: "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b2)".
// Asked once per binary and process.
func QEMUVersion(qemu string) (string, error) {
	if qemu == "" {
		qemu = "qemu-system-x86_64"
	}
	type answer struct {
		v   string
		err error
	}
	if a, ok := qemuVersions.Load(qemu); ok {
		return a.(answer).v, a.(answer).err
	}
	ctx, cancel := context.WithTimeout(context.Background(), qemuVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, qemu, "--version").Output()
	var a answer
	if err != nil {
		a.err = fmt.Errorf("%s --version: %w", qemu, err)
	} else {
		line, _, _ := bytes.Cut(out, []byte("\n"))
		a.v = strings.TrimSpace(strings.TrimPrefix(string(line), "QEMU emulator version "))
	}
	qemuVersions.Store(qemu, a)
	return a.v, a.err
}
