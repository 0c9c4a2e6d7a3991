//go:build !slow

package main

// work is the handler's own work: none in the base.
func work(n uint64) {}
