package vm

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// The clocks a VM can be asked for (Settings.Clock); result.Target.Clock
// records the one it ran on.
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

// Clocks are the values Settings.Clock takes.
var Clocks = []string{ClockAuto, ClockVirtual, ClockReal}

// Clock is the clock a boot runs on, resolved (Setup.Clock).
type Clock int

const (
	// RealTime: the guest's clocks follow the host's.
	RealTime Clock = iota + 1
	// VirtualTime: the guest's clocks count its instructions (-icount).
	VirtualTime
)

// Virtual says the clock counts the guest's instructions.
func (c Clock) Virtual() bool { return c == VirtualTime }

// String is the clock as a Result records it (result.ClockVirtual,
// result.ClockReal).
func (c Clock) String() string {
	if c.Virtual() {
		return result.ClockVirtual
	}
	return result.ClockReal
}

// Independent says a boot on the clock measures nothing of the machine
// it runs on, so that several may run at once: virtual time counts the
// guest's own instructions; real time would measure the other boots.
func (c Clock) Independent() bool { return c.Virtual() }

// DeadlineFactor is how many times a request's own time (warmups and
// trials, in the guest's time) a boot on the clock may take in wall
// time, before BootAllowance. In virtual time a second of the guest's is
// 10^9 instructions: a boot of a built-in's 0.6 s took up to 62 s on a
// loaded host (BENCHMARKS.md); in real time emulation may halve the
// guest's speed.
func (c Clock) DeadlineFactor() int {
	if c.Virtual() {
		return 60
	}
	return 2
}

// BootAllowance is the wall time a boot on the clock may take beyond
// its request's (DeadlineFactor): booting and attaching the tracers.
func (c Clock) BootAllowance() time.Duration {
	if c.Virtual() {
		return 3 * time.Minute
	}
	return 90 * time.Second
}

// Deadline is how long a boot on the clock may take for a request of
// work guest time: DeadlineFactor times work, plus BootAllowance.
func (c Clock) Deadline(work time.Duration) time.Duration {
	return time.Duration(c.DeadlineFactor())*work + c.BootAllowance()
}

// QEMUArgs are QEMU's options of the clock, beyond the accelerator's.
// In virtual time the guest's time counts instructions and skips idle
// time (sleep=off); its wall clock and QEMU's random source start the
// same in every boot, and the RTC follows the guest's time.
func (c Clock) QEMUArgs() []string {
	if !c.Virtual() {
		return nil
	}
	return []string{
		"-icount", fmt.Sprintf("shift=%d,sleep=off", IcountShift),
		"-rtc", "base=" + virtualEpoch + ",clock=vm",
		"-seed", virtualSeed,
	}
}

// VirtioOption is what a virtio device's -device value gets on the
// clock. In virtual time the devices take their notifications on the
// vCPU's own thread (ioeventfd=off): handed to QEMU's main loop, their
// completions reached the guest at a different instruction in each boot.
func (c Clock) VirtioOption() string {
	if c.Virtual() {
		return ",ioeventfd=off"
	}
	return ""
}

// phrase says what the clock is under accel, for progress.
func (c Clock) phrase(accel string) string {
	switch {
	case c.Virtual():
		return fmt.Sprintf("virtual time (%d ns an instruction)", 1<<IcountShift)
	case accel == "tcg":
		return "real time, emulated"
	}
	return "real time"
}

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

// stampVirtual puts on res what a guest in virtual time cannot say of
// itself: its boot's seed, its boot's identity, which a guest that boots the same way each
// time draws the same (result.Merge tells trials apart by it), and when
// it ran, from the host's clock; the guest's wall clock is virtualEpoch.
func stampVirtual(res *result.Result, seed uint64, started, finished time.Time) {
	var b [16]byte
	rand.Read(b[:])
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	for _, s := range res.Scenarios {
		for _, m := range s.Metrics {
			for i := range m.Trials {
				m.Trials[i].BootID, m.Trials[i].Seed = id, seed
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
