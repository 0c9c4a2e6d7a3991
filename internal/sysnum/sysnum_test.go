package sysnum

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestNumbersAreTheKernels(t *testing.T) {
	for name, want := range map[string]int{
		"read": unix.SYS_READ, "write": unix.SYS_WRITE, "statx": unix.SYS_STATX,
		"openat2": unix.SYS_OPENAT2, "epoll_pwait2": unix.SYS_EPOLL_PWAIT2,
		"futex_waitv": unix.SYS_FUTEX_WAITV, "splice": unix.SYS_SPLICE,
		"clone3": unix.SYS_CLONE3, "fdatasync": unix.SYS_FDATASYNC,
	} {
		if got, ok := Numbers[name]; !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", name, got, ok, want)
		}
	}
	for _, n := range Names() {
		if Numbers[n] < 0 || Numbers[n] >= 512 {
			t.Errorf("%s is syscall %d, beyond the tracer's table of 512", n, Numbers[n])
		}
	}
}
