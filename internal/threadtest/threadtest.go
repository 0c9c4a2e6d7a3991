// Package threadtest has what tests on the real kernel do to their own
// threads: pin them, make them real-time, name them, and run a ping-pong
// between two of them. Call from a goroutine locked to its thread
// (runtime.LockOSThread): each acts on the calling thread.
package threadtest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pin pins the calling thread to cpu.
func Pin(t testing.TB, cpu int) {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
}

// SetScheduler sets the calling thread's policy and real-time priority.
func SetScheduler(policy, prio int) error {
	param := struct{ priority int32 }{int32(prio)}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(policy), uintptr(unsafe.Pointer(&param))); e != 0 {
		return fmt.Errorf("sched_setscheduler(%d, %d): %w", policy, prio, e)
	}
	return nil
}

// SetName sets the calling thread's comm.
func SetName(name string) error {
	b, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(b)), 0, 0, 0)
}

// PingPongPinned runs rounds round trips of a byte over two pipes between
// the calling thread and a partner thread pinned to partnerCPU.
func PingPongPinned(t testing.TB, rounds, partnerCPU int) {
	var ab, ba [2]int
	if err := unix.Pipe(ab[:]); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe(ba[:]); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, fd := range []int{ab[0], ab[1], ba[0], ba[1]} {
			unix.Close(fd)
		}
	}()
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		Pin(t, partnerCPU)
		b := []byte{0}
		for range rounds {
			unix.Read(ab[0], b)
			unix.Write(ba[1], b)
		}
	}()
	b := []byte{0}
	for range rounds {
		unix.Write(ab[1], b)
		unix.Read(ba[0], b)
	}
	<-done
}

// Hog starts a thread named comm, pinned to cpu at SCHED_FIFO prio, that
// spins for spin and sleeps for sleep, over and over, until the test ends.
// The thread stays real-time: it is never handed back to the runtime. Hog
// returns once the thread runs at its priority.
func Hog(t testing.TB, comm string, cpu, prio int, spin, sleep time.Duration) {
	var stop atomic.Bool
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		Pin(t, cpu)
		SetName(comm)
		if err := SetScheduler(unix.SCHED_FIFO, prio); err != nil {
			t.Error(err)
		}
		close(ready)
		for !stop.Load() {
			for end := time.Now().Add(spin); time.Now().Before(end); {
			}
			time.Sleep(sleep)
		}
	}()
	t.Cleanup(func() { stop.Store(true) })
	<-ready
}
