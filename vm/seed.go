package vm

import (
	"fmt"
	"time"
)

// Seeds in virtual time. Every boot of one kernel and one command line is
// the same to the instruction, so two sides of a comparison are two fixed
// points, and anything that shifts what the guest is given (a patch, a
// config, one meaningless command-line token) moves the scheduling and
// timer metrics as a change would (docs/vms.md, "Seeds"). A seeded boot
// draws what a change should not matter to:
//   - its layout: a token of fixed length on the guest's command line,
//     which the kernel mixes into its random pool at boot, and from which
//     come the slab freelists' order, user address-space layout, hash
//     seeds and the random bytes (AT_RANDOM) the Go runtime of the
//     workload seeds itself with;
//   - its start phase: a sleep of the guest's before its trial, which
//     moves the workload's start against the guest's timer tick.
//
// QEMU's own -seed stays fixed (it makes RDRAND repeat): the draw is in
// bytes the guest mixes in itself.

// MaxPhase bounds a seeded boot's start phase: longer than the tick of a
// kernel of 100 Hz, so that the phase covers every place in it.
const MaxPhase = 10 * time.Millisecond

// seedTokenKey is the guest command line's key of the layout seed.
const seedTokenKey = "tailgate.seed"

// mix is splitmix64's finalizer of seed and salt: one draw of 64 bits per
// (seed, purpose), whatever the seeds' spacing.
func mix(seed, salt uint64) uint64 {
	z := seed*0x9e3779b97f4a7c15 + salt
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// SeedToken is the command-line token of seed's layout: of one length
// for every seed, so that no seed lengthens the command line.
func SeedToken(seed uint64) string {
	return fmt.Sprintf("%s=%016x", seedTokenKey, mix(seed, 1))
}

// PhaseOf is seed's start phase: a delay in [0, MaxPhase), in guest time.
func PhaseOf(seed uint64) time.Duration {
	return time.Duration(mix(seed, 2) % uint64(MaxPhase))
}
