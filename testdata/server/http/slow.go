//go:build slow

package main

import "time"

// work spins for 40 µs on every 40th request.
func work(n uint64) {
	if n%40 != 0 {
		return
	}
	for start := time.Now(); time.Since(start) < 40*time.Microsecond; {
	}
}
