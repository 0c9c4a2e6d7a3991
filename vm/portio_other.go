//go:build !amd64

package vm

import "errors"

var errNoPorts = errors.New("a guest's port I/O is for x86-64 only")

func outbTimed(port uint16, val uint8) (before, after uint64) { return 0, 0 }
func outb(port uint16, val uint8)                             {}
func outw(port uint16, val uint16)                            {}
func inb(port uint16) uint8                                   { return 0 }
func openPorts(port, n int) error                             { return errNoPorts }
