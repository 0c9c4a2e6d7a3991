package loadgen

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// A pacer's sleep is part of every latency it measures (from the
// intended send time), so up to 2000 requests/s it sleeps on a thread of
// its own in clock_nanosleep with a timer slack of 1 ns: Go's timers woke
// a 2 ms sleep 177-197 µs late at p50 and 291-301 µs at p99 here, against
// 30 and 83 µs, and the generator's p99 over a TCP server's own fell from
// about 1 ms to one bucket (BENCHMARKS.md, "Built-in load generator").
// Each such sleep costs about 50 µs of CPU more than a Go timer's (the
// thread blocks in a system call); at higher rates a pacer keeps the Go
// timers, whose Ps are busy then anyway.

// minPrecisePeriod is the shortest period (the highest rate, 2000/s)
// whose pacer sleeps in clock_nanosleep.
const minPrecisePeriod = 500 * time.Microsecond

// maxNap bounds one clock_nanosleep, so that a long wait still sees ctx
// end.
const maxNap = 10 * time.Millisecond

// onPacerThread runs f on an OS thread of its own whose timer slack is
// 1 ns (lockPacerThread), and returns when f does.
func onPacerThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		lockPacerThread()
		f()
	}()
	<-done
}

// lockPacerThread locks the calling goroutine to its thread for good and
// sets the thread's timer slack to 1 ns. The goroutine must end without
// unlocking: its thread then ends with it instead of going back to Go's
// pool, so no other goroutine inherits the slack.
func lockPacerThread() {
	runtime.LockOSThread()
	// Best effort: without it the sleeps keep the default 50 µs slack.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// waitUntil sleeps until t, or until ctx ends, in clock_nanosleep: on a
// thread of onPacerThread, to tens of µs.
func waitUntil(ctx context.Context, t time.Time) {
	for ctx.Err() == nil {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := unix.NsecToTimespec(int64(min(d, maxNap)))
		_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil) // EINTR: the loop sleeps the rest
	}
}
