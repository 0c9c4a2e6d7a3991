//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// syscallLoad is the syscall kind: each thread calls read(2) on /dev/zero,
// write(2) on /dev/null or getppid(2), in a closed loop or paced to Rate.
type syscallLoad struct {
	w      Workload
	params Syscall
	pid    int
	trap   uintptr
	fds    []int    // one per thread, so threads share no struct file
	bufs   [][]byte // one per thread
	clk    monoClock
}

func newSyscallLoad(w Workload, pid int) (*syscallLoad, error) {
	if err := CheckAllowedCPUs(w.CPUs); err != nil {
		return nil, err
	}
	l := &syscallLoad{w: w, params: *w.Params.(*Syscall), pid: pid}
	var path string
	var flags int
	switch l.params.Name {
	case "read":
		l.trap, path, flags = unix.SYS_READ, "/dev/zero", unix.O_RDONLY
	case "write":
		l.trap, path, flags = unix.SYS_WRITE, "/dev/null", unix.O_WRONLY
	case "getppid":
		l.trap = unix.SYS_GETPPID
	}
	if path != "" {
		for range w.Threads {
			fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
			if err != nil {
				l.close()
				return nil, fmt.Errorf("open %s: %w", path, err)
			}
			l.fds = append(l.fds, fd)
			l.bufs = append(l.bufs, make([]byte, l.params.Size))
		}
	}
	if l.params.Rate > 0 {
		var err error
		if l.clk, err = newMonoClock(); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

func (l *syscallLoad) threads() int { return l.w.Threads }

func (l *syscallLoad) close() error {
	var errs []error
	for _, fd := range l.fds {
		errs = append(errs, unix.Close(fd))
	}
	l.fds = nil
	return errors.Join(errs...)
}

func (l *syscallLoad) run(ctx context.Context) (Stats, error) {
	return runCrew(withPinCPUs(ctx, l.w.CPUs), l.pid, l.w.Threads, l.thread, nil)
}

func (l *syscallLoad) thread(i int, c *crew, m *member) {
	var a1, a2, a3 uintptr
	if l.fds != nil {
		// The buffer is on the heap, referenced by l.bufs: it neither
		// moves nor dies while the loop runs.
		a1, a2, a3 = uintptr(l.fds[i]), uintptr(unsafe.Pointer(&l.bufs[i][0])), uintptr(len(l.bufs[i]))
	}
	var calls uint64
	defer func() { m.sys[l.params.Name] += calls }()
	// One call is one syscall: no wrapper, no retry loop. RawSyscall keeps
	// the P; these syscalls do not block.
	call := func() bool {
		_, _, e := unix.RawSyscall(l.trap, a1, a2, a3)
		calls++
		switch e {
		case 0:
			m.ops++
		case unix.EINTR:
		default:
			m.err = fmt.Errorf("%s: %w", l.params.Name, e)
			return false
		}
		return true
	}
	if l.params.Rate == 0 {
		for !c.stop.Load() {
			if !call() {
				return
			}
		}
		return
	}
	// Paced: operation k is due at start + k/Rate. A thread that falls
	// behind catches up, so the rate holds over the run.
	c.sleeper(i, m)
	period := float64(time.Second) / l.params.Rate
	start := time.Now()
	startNs := l.clk.ns(start)
	for k := 0.0; !c.stop.Load(); {
		due := time.Duration(k * period)
		if time.Since(start) < due {
			if err := sleepUntil(startNs+int64(due), m); err != nil && !errors.Is(err, unix.EINTR) {
				m.err = fmt.Errorf("clock_nanosleep: %w", err)
				return
			}
			continue
		}
		before := m.ops
		if !call() {
			return
		}
		if m.ops > before {
			k++
		}
	}
}
