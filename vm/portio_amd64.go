package vm

import "golang.org/x/sys/unix"

// The guest's port I/O (checkpoint.go): an x86 guest reaches QEMU's
// pvpanic and fw_cfg devices through I/O ports, from user space once
// ioperm opens them, with no kernel module.

// outbTimed writes val to port between two reads of the time-stamp
// counter, which in virtual time is the guest's instruction clock.
func outbTimed(port uint16, val uint8) (before, after uint64)

func outb(port uint16, val uint8)

func outw(port uint16, val uint16)

func inb(port uint16) uint8

// openPorts lets this process use n ports from port.
func openPorts(port, n int) error { return unix.Ioperm(port, n, 1) }
