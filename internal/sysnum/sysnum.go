// Package sysnum names the syscalls tailgate can trace: one table per
// architecture (zsysnum_GOARCH.go, generated from golang.org/x/sys/unix by
// go generate) for the scenario parser, which validates names, and the
// syscall tracer, which turns them into numbers.
package sysnum

//go:generate go run ./gen

import "sort"

// Names returns the traceable syscall names, sorted.
func Names() []string {
	ns := make([]string, 0, len(Numbers))
	for n := range Numbers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
