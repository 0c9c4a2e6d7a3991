package vm

import (
	"os/exec"
	"testing"
)

// A saved state's path reaches sh in QEMU's exec: migrations: quoted, it
// is one word whatever it holds.
func TestShellQuote(t *testing.T) {
	for _, p := range []string{"/tmp/a b/state", "/tmp/it's/state", "/tmp/$(reboot)/`x`/state", `/tmp/"q"\/state`} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(p)).Output()
		if err != nil || string(out) != p {
			t.Errorf("sh got %q (%v) for %q", out, err, p)
		}
	}
}

// Every QEMU of a layout must have the same fw_cfg files at the same keys:
// the phase seed's file is of one size whatever the seed.
func TestPhaseArgLength(t *testing.T) {
	want := len(phaseArg(0))
	for _, seed := range []uint64{1, 2, 1 << 40, ^uint64(0)} {
		if got := len(phaseArg(seed)); got != want {
			t.Errorf("phaseArg(%d) is %d bytes, phaseArg(0) %d", seed, got, want)
		}
	}
}
