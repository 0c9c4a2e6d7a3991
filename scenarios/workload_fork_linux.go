//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// forkLoad is the fork kind: each thread creates a child (mode fork) or an
// OS thread (mode thread) that exits at once, and waits for it.
type forkLoad struct {
	w      Workload
	params Fork
}

func (l *forkLoad) threads() int {
	if l.params.Mode == "thread" {
		return 2 * l.w.Threads // each waiter and the thread it made
	}
	return l.w.Threads
}

func (l *forkLoad) close() error { return nil }

func (l *forkLoad) run(ctx context.Context) (Stats, error) {
	body := l.forkExit
	if l.params.Mode == "thread" {
		body = l.threadExit
	}
	return runCrew(ctx, 0, l.w.Threads, body, nil)
}

func (l *forkLoad) forkExit(_ int, c *crew, m *member) {
	for !c.stop.Load() {
		pid, errno := forkChild(nil, 0)
		m.sys["rt_sigprocmask"] += 2
		m.sys["clone"]++
		if errno != 0 {
			m.err = fmt.Errorf("fork: %w", errno)
			return
		}
		if err := reap(int(pid), m); err != nil {
			m.err = err
			return
		}
		m.ops++
	}
}

// threadExit starts goroutines that lock their thread and return without
// unlocking it: the Go runtime then ends that thread, and has to create a
// new one for the next goroutine that needs it. In a steady loop that is
// one thread created and one ended per operation.
func (l *forkLoad) threadExit(_ int, c *crew, m *member) {
	for !c.stop.Load() {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
		m.ops++
	}
}

// reap waits for child pid to exit.
func reap(pid int, m *member) error {
	for {
		var ws unix.WaitStatus
		m.sys["wait4"]++
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait4 child %d: %w", pid, err)
		}
		return nil
	}
}

// forkChild forks the process: clone(SIGCHLD), no shared memory, as
// fork(2). The child has no Go runtime: it is a copy of this one thread, so
// it must not allocate, grow its stack, take a lock or take a signal. All
// signals stay blocked in it; everything it runs is nosplit. With spin nil
// the child exits at once; else it counts spin rounds into *spin until it
// is killed or the parent thread ends (PR_SET_PDEATHSIG). ppid is the
// caller's pid, to catch a parent that ended before the child set that up.
//
//go:nosplit
//go:norace
func forkChild(spin *uint64, ppid uintptr) (pid uintptr, errno syscall.Errno) {
	all, old := ^uint64(0), uint64(0)
	if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return 0, e
	}
	r, _, e := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e == 0 && r == 0 {
		if spin != nil {
			syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0)
			if p, _, _ := syscall.RawSyscall(unix.SYS_GETPPID, 0, 0, 0); p == ppid {
				spinRounds(spin)
			}
		}
		for {
			syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	return r, e
}

// spinRounds burns CPU forever, counting rounds of about a microsecond.
//
//go:nosplit
//go:norace
func spinRounds(counter *uint64) {
	x, n := uint64(1), uint64(0)
	for {
		for range 1 << 10 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		n++
		storeRound(counter, n, x)
	}
}

// storeRound publishes a hog's round count, and its x so the spinning is
// not dead code. A call the compiler may not inline is what makes the
// stores happen: inside spinRounds, which never returns, they could stay
// in registers. The parent reads after killing the child.
//
//go:noinline
//go:nosplit
//go:norace
func storeRound(counter *uint64, n, x uint64) {
	*counter = n
	*(*uint64)(unsafe.Add(unsafe.Pointer(counter), 8)) = x
}

// hogs are CPU hog processes. They are forked children rather than
// goroutines so that they hold no Go P: a measured thread that wakes up
// must never wait for the Go scheduler to get a hog off a P.
type hogs struct {
	n   int
	mem []byte // MAP_SHARED: a 64-byte slot per hog, its round count first
}

const hogSlot = 64

func newHogs(n int) (*hogs, error) {
	mem, err := unix.Mmap(-1, 0, max(n, 1)*hogSlot, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("noise: mmap: %w", err)
	}
	return &hogs{n: n, mem: mem}, nil
}

func (h *hogs) close() error {
	if h.mem == nil {
		return nil
	}
	err := unix.Munmap(h.mem)
	h.mem = nil
	return err
}

func (h *hogs) counter(i int) *uint64 {
	return (*uint64)(unsafe.Pointer(&h.mem[i*hogSlot]))
}

// start forks the hogs. stop kills and reaps them; its Stats count their
// spin rounds as Ops.
func (h *hogs) start() (stop func() (Stats, error), err error) {
	startErr := make(chan error, 1)
	stopc := make(chan struct{})
	type ended struct {
		st  Stats
		err error
	}
	endc := make(chan ended, 1)
	// One locked thread forks, kills and reaps the hogs: PR_SET_PDEATHSIG
	// fires when the thread that forked a child ends, so it must be a
	// thread that lives until the hogs are killed.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		m := &member{sys: map[string]uint64{"getpid": 1}}
		ppid := uintptr(unix.Getpid())
		var pids []int
		var err error
		for i := range h.n {
			atomic.StoreUint64(h.counter(i), 0)
			pid, errno := forkChild(h.counter(i), ppid)
			m.sys["rt_sigprocmask"] += 2
			m.sys["clone"]++
			if errno != 0 {
				err = fmt.Errorf("noise: fork hog: %w", errno)
				break
			}
			pids = append(pids, int(pid))
		}
		startErr <- err
		if err == nil {
			<-stopc
		}
		// Kill them all before reaping any, so they die in parallel.
		for _, pid := range pids {
			m.sys["kill"]++
			_ = unix.Kill(pid, unix.SIGKILL) // fails only if it is gone already
		}
		var reapErr error
		for _, pid := range pids {
			if err := reap(pid, m); err != nil && reapErr == nil {
				reapErr = err
			}
		}
		for i := range pids {
			m.ops += atomic.LoadUint64(h.counter(i))
		}
		endc <- ended{Stats{Ops: m.ops, Syscalls: m.sys}, reapErr}
	}()
	if err := <-startErr; err != nil {
		<-endc
		return nil, err
	}
	return func() (Stats, error) {
		close(stopc)
		e := <-endc
		return e.st, e.err
	}, nil
}
