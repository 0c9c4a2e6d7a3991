//go:build linux && amd64

package scenarios

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pingpongLoad is the pingpong kind: in each pair, thread A sends a token
// to thread B and waits for it to come back; B waits for the token and
// sends it back. Ops counts round trips.
type pingpongLoad struct {
	w      Workload
	params Pingpong
	pairs  []*pingpongPair
}

// pingpongPair is one pair's channel. Direction 0 carries A to B and 1
// carries B to A.
type pingpongPair struct {
	rd, wr [2]int // pipe or eventfd: the ends of each direction
	msg    int    // bytes per token: 1 on a pipe, the 8-byte counter of an eventfd
	// futex: 0 while it is A's turn, 1 while it is B's, 2 once stopped.
	word atomic.Uint32
}

const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
	turnA, turnB     = 0, 1
	turnStopped      = 2
)

func newPingpongLoad(w Workload) (*pingpongLoad, error) {
	if err := CheckAllowedCPUs(w.CPUs); err != nil {
		return nil, err
	}
	l := &pingpongLoad{w: w, params: *w.Params.(*Pingpong)}
	for range w.Pairs {
		p := &pingpongPair{}
		l.pairs = append(l.pairs, p)
		for d := range 2 {
			switch l.params.Channel {
			case "pipe":
				var fds [2]int
				if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
					l.close()
					return nil, fmt.Errorf("pipe2: %w", err)
				}
				p.rd[d], p.wr[d], p.msg = fds[0], fds[1], 1
			case "eventfd":
				fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
				if err != nil {
					l.close()
					return nil, fmt.Errorf("eventfd: %w", err)
				}
				p.rd[d], p.wr[d], p.msg = fd, fd, 8
			}
		}
	}
	return l, nil
}

func (l *pingpongLoad) threads() int { return 2 * l.w.Pairs }

func (l *pingpongLoad) close() error {
	var errs []error
	for _, p := range l.pairs {
		for d := range 2 {
			if p.msg == 0 {
				continue
			}
			errs = append(errs, unix.Close(p.rd[d]))
			if p.wr[d] != p.rd[d] {
				errs = append(errs, unix.Close(p.wr[d]))
			}
		}
	}
	l.pairs = nil
	return errors.Join(errs...)
}

func (l *pingpongLoad) run(ctx context.Context) (Stats, error) {
	for _, p := range l.pairs {
		p.word.Store(turnA)
	}
	st, err := runCrew(withPinCPUs(ctx, l.w.CPUs), 0, 2*len(l.pairs), l.thread, l.wake)
	if l.params.Channel != "futex" {
		// The stopper's wake tokens, and perhaps a token in flight, must
		// not leak into the next run.
		m := &member{sys: st.Syscalls}
		for _, p := range l.pairs {
			for d := range 2 {
				if derr := drain(p.rd[d], m); derr != nil && err == nil {
					err = derr
				}
			}
		}
	}
	return st, err
}

// wake unblocks both threads of every pair once stop is set: a token in
// each direction, or the futex word set to stopped.
func (l *pingpongLoad) wake(sys map[string]uint64) {
	m := &member{sys: sys}
	buf := newToken()
	for _, p := range l.pairs {
		if l.params.Channel == "futex" {
			p.word.Store(turnStopped)
			futex(&p.word, futexWakePrivate, 1<<31-1, m)
			continue
		}
		for d := range 2 {
			transfer(unix.SYS_WRITE, p.wr[d], buf[:p.msg], m)
		}
	}
}

func newToken() []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint64(b, 1) // an eventfd adds this to its counter
	return b
}

func (l *pingpongLoad) thread(i int, c *crew, m *member) {
	p, side := l.pairs[i/2], i%2
	if l.params.Channel == "futex" {
		p.futexThread(side, c, m)
		return
	}
	buf := newToken()[:p.msg]
	in, out := p.rd[1], p.wr[0] // A: send on 0, receive on 1
	if side == 1 {
		in, out = p.rd[0], p.wr[1]
	}
	for !c.stop.Load() {
		if side == 1 {
			if !transfer(unix.SYS_READ, in, buf, m) || c.stop.Load() {
				return
			}
		}
		if !transfer(unix.SYS_WRITE, out, buf, m) {
			return
		}
		if side == 0 {
			if !transfer(unix.SYS_READ, in, buf, m) || c.stop.Load() {
				return
			}
			m.ops++
		}
	}
}

// transfer makes one read or write of buf, retrying on EINTR. Every call
// is counted.
func transfer(trap uintptr, fd int, buf []byte, m *member) bool {
	name := "read"
	if trap == unix.SYS_WRITE {
		name = "write"
	}
	for {
		_, _, e := unix.Syscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		m.sys[name]++
		switch e {
		case 0:
			return true
		case unix.EINTR:
			continue
		}
		if m.err == nil {
			m.err = fmt.Errorf("pingpong %s: %w", name, e)
		}
		return false
	}
}

// drain empties fd without blocking.
func drain(fd int, m *member) error {
	m.sys["fcntl"] += 2
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	buf := make([]byte, 4096)
	for {
		m.sys["read"]++
		if _, err := unix.Read(fd, buf); err != nil {
			if !errors.Is(err, unix.EINTR) {
				break // EAGAIN: empty
			}
		}
	}
	m.sys["fcntl"] += 2
	if err := unix.SetNonblock(fd, false); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	return nil
}

func futex(word *atomic.Uint32, op, val uintptr, m *member) {
	m.sys["futex"]++
	// EAGAIN (the word changed) and EINTR send the caller back to look at
	// the word; nothing else can fail on a valid private futex.
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), op, val, 0, 0, 0)
}

func (p *pingpongPair) futexThread(side int, c *crew, m *member) {
	if side == 0 {
		for !c.stop.Load() {
			p.word.Store(turnB)
			futex(&p.word, futexWakePrivate, 1, m)
			for p.word.Load() == turnB {
				if c.stop.Load() {
					return
				}
				futex(&p.word, futexWaitPrivate, turnB, m)
			}
			if c.stop.Load() {
				return
			}
			m.ops++
		}
		return
	}
	for {
		for p.word.Load() == turnA {
			if c.stop.Load() {
				return
			}
			futex(&p.word, futexWaitPrivate, turnA, m)
		}
		if c.stop.Load() {
			return
		}
		p.word.Store(turnA)
		futex(&p.word, futexWakePrivate, 1, m)
	}
}

// pinThread binds the calling thread to the i-th CPU it may run on (modulo
// their number) and returns what restores its former CPU set. Threads left
// to the scheduler land on different CPUs from run to run, and the latency
// distribution changes shape between runs: ping-pong partners share one CPU
// in some runs and not in others (the A/A p50 of pipe-pingpong moved by
// 200-400% unpinned), and a getppid loop's p90 moved 36% between CPUs of
// this VM. Pinned, thread 2k and 2k+1 of a ping-pong always wake each other
// across two CPUs and a one-thread loop always runs on the first CPU. With
// one CPU it does nothing and returns cpu -1. Given only (a workload's
// cpus, checked when it was prepared), it pins to the i-th of those
// instead, even to one CPU.
func pinThread(i int, only []int, m *member) (cpu int, restore func()) {
	var old unix.CPUSet
	m.sys["sched_getaffinity"]++
	if unix.SchedGetaffinity(0, &old) != nil || (old.Count() < 2 && only == nil) {
		return -1, func() {}
	}
	cpus := only
	for cpu := 0; cpu < 1024 && only == nil && len(cpus) < old.Count(); cpu++ {
		if old.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	var set unix.CPUSet
	cpu = cpus[i%len(cpus)]
	set.Set(cpu)
	m.sys["sched_setaffinity"]++
	if unix.SchedSetaffinity(0, &set) != nil {
		return -1, func() {}
	}
	return cpu, func() {
		m.sys["sched_setaffinity"]++
		unix.SchedSetaffinity(0, &old)
	}
}
