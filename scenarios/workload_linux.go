//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

type runner struct {
	mu     sync.Mutex
	w      Workload
	load   kindLoad
	hogs   *hogs // nil without noise
	closed bool
}

func newRunner(w Workload) (Runner, error) {
	pid := unix.Getpid()
	r := &runner{w: w}
	k, _ := lookupKind(w.Kind) // NewWorkload checked w
	var err error
	if r.load, err = k.New(w, pid); err != nil {
		return nil, err
	}
	if w.Noise != 0 {
		n := w.Noise
		if n == NoiseNumCPU {
			n = runtime.NumCPU()
		}
		if r.hogs, err = newHogs(n); err != nil {
			r.load.close()
			return nil, err
		}
		if nl, ok := r.load.(*noiseLoad); ok {
			nl.hogs = r.hogs
		}
	}
	return r, nil
}

func (r *runner) Run(ctx context.Context) (Stats, error) {
	if !r.mu.TryLock() {
		return Stats{}, errors.New("run already in progress")
	}
	defer r.mu.Unlock()
	if r.closed {
		return Stats{}, ErrClosed
	}
	// A measured thread that wakes in the kernel must find a free P, or it
	// waits for the Go scheduler and the measurement includes that wait.
	// The hogs are processes and take no P.
	if need := r.load.threads() + 1; runtime.GOMAXPROCS(0) < need {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(need))
	}
	if _, hogsAlone := r.load.(*noiseLoad); r.hogs != nil && !hogsAlone {
		stop, err := r.hogs.start()
		if err != nil {
			return Stats{}, err
		}
		st, err := r.load.run(ctx)
		hs, herr := stop()
		addCounts(st.Syscalls, hs.Syscalls)
		return st, errors.Join(err, herr)
	}
	return r.load.run(ctx)
}

func (r *runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.load.close()
	if r.hogs != nil {
		err = errors.Join(err, r.hogs.close())
	}
	return err
}

func addCounts(dst, src map[string]uint64) {
	for k, v := range src {
		dst[k] += v
	}
}

// crew is the set of locked OS threads doing one run's work.
type crew struct {
	pid  int
	stop atomic.Bool
	// tids of members that sleep in the kernel and are woken by a signal
	// when the run stops; 0 for the others.
	tids []atomic.Int32
}

// member is what one thread of a crew did.
type member struct {
	ops   uint64
	sys   map[string]uint64
	hists map[string]*hist.Histogram
	err   error
	// exitThread ends the OS thread when the member returns, instead of
	// handing it back to the Go runtime: its state was changed (e.g. its
	// scheduling policy).
	exitThread bool
	cpu        int // pinned to, or -1
}

// sleeper lets the stopper interrupt the member's sleeps: a signal makes
// clock_nanosleep return EINTR, which a loop turns into a look at stop.
func (c *crew) sleeper(i int, m *member) {
	m.sys["gettid"]++
	c.tids[i].Store(int32(unix.Gettid()))
}

// runCrew runs body on n locked OS threads until ctx is done or a body
// fails. Then it sets c.stop and, every 2ms until all bodies have returned,
// calls wake (to unblock members waiting on each other; it counts its
// syscalls in the map it is given) and sends SIGURG to the sleepers. The
// Go runtime takes SIGURG for its own preemption and ignores the extra
// ones; it is the signal that disturbs nothing.
func runCrew(ctx context.Context, pid, n int, body func(i int, c *crew, m *member), wake func(sys map[string]uint64)) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &crew{pid: pid, tids: make([]atomic.Int32, n)}
	ms := make([]member, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.runMember(ctx, i, &ms[i], body, cancel)
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	stopper := map[string]uint64{}
	select {
	case <-done:
	case <-ctx.Done():
		c.stopMembers(done, wake, stopper)
	}
	return crewStats(ms, stopper)
}

// runMember runs body as member i on a locked OS thread, pinned as ctx
// says and announced to ctx's thread hook while it runs; a member's error
// cancels the others.
func (c *crew) runMember(ctx context.Context, i int, m *member, body func(i int, c *crew, m *member), cancel func()) {
	runtime.LockOSThread()
	m.sys = map[string]uint64{}
	cpu, restore := pinThread(i+cpuOffsetOf(ctx), pinCPUsOf(ctx), m)
	m.cpu = cpu
	hook := threadHookOf(ctx)
	tid := 0
	if hook != nil {
		tid = unix.Gettid()
		m.sys["gettid"]++
		hook(tid, true)
	}
	body(i, c, m)
	if hook != nil {
		// Before the thread can go back to running other goroutines.
		hook(tid, false)
	}
	restore()
	c.tids[i].Store(0)
	if m.err != nil {
		cancel()
	}
	if !m.exitThread {
		runtime.UnlockOSThread()
	}
}

// stopMembers sets c.stop and, every 2ms until done closes, calls wake
// and signals the sleepers, counting its syscalls in stopper.
func (c *crew) stopMembers(done <-chan struct{}, wake func(sys map[string]uint64), stopper map[string]uint64) {
	c.stop.Store(true)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if wake != nil {
			wake(stopper)
		}
		for i := range c.tids {
			if tid := c.tids[i].Load(); tid != 0 {
				stopper["tgkill"]++
				// ESRCH: the thread is gone, which is what we want.
				_ = unix.Tgkill(c.pid, int(tid), unix.SIGURG)
			}
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// crewStats adds up what the members did, with the stopper's syscalls,
// and returns the first member's error.
func crewStats(ms []member, stopper map[string]uint64) (Stats, error) {
	st := Stats{Syscalls: stopper}
	var errs []error
	for i := range ms {
		m := &ms[i]
		st.Ops += m.ops
		addCounts(st.Syscalls, m.sys)
		if m.cpu >= 0 && !slices.Contains(st.CPUs, m.cpu) {
			st.CPUs = append(st.CPUs, m.cpu)
		}
		for name, h := range m.hists {
			if st.Metrics == nil {
				st.Metrics = map[string]*hist.Histogram{}
			}
			if st.Metrics[name] == nil {
				st.Metrics[name] = hist.New()
			}
			st.Metrics[name].Merge(h)
		}
		if m.err != nil {
			errs = append(errs, m.err)
		}
	}
	slices.Sort(st.CPUs)
	if len(errs) > 0 {
		return st, errs[0] // the others are usually its echo
	}
	return st, nil
}

// monoClock maps Go's monotonic time onto CLOCK_MONOTONIC, which
// clock_nanosleep(TIMER_ABSTIME) takes. Go reads that same clock through
// the vDSO, so the offset is fixed: measuring it once costs one syscall
// instead of a clock_gettime syscall per wakeup.
type monoClock struct {
	base   time.Time
	baseNs int64
}

func newMonoClock() (monoClock, error) {
	var best monoClock
	bestSpan := time.Duration(1<<63 - 1)
	// Bracket the syscall between two Go readings and keep the tightest
	// bracket: its midpoint is within a few tens of ns of the truth.
	for range 5 {
		var ts unix.Timespec
		t0 := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return best, fmt.Errorf("clock_gettime: %w", err)
		}
		span := time.Since(t0)
		if span < bestSpan {
			bestSpan = span
			best = monoClock{base: t0.Add(span / 2), baseNs: ts.Nano()}
		}
	}
	return best, nil
}

// ns returns t on CLOCK_MONOTONIC, in ns.
func (c monoClock) ns(t time.Time) int64 { return c.baseNs + int64(t.Sub(c.base)) }

func (c monoClock) now() int64 { return c.ns(time.Now()) }

// sleepUntil sleeps until deadline (CLOCK_MONOTONIC ns). EINTR is returned
// for the caller's loop to look at stop and sleep again.
func sleepUntil(deadline int64, m *member) error {
	ts := unix.NsecToTimespec(deadline)
	m.sys["clock_nanosleep"]++
	return unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
}

// The built-in kinds' WorkloadKind.New.

func newSyscallKind(w Workload, pid int) (kindLoad, error) {
	l, err := newSyscallLoad(w, pid)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func newPingpongKind(w Workload, _ int) (kindLoad, error) {
	l, err := newPingpongLoad(w)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func newTimerKind(w Workload, pid int) (kindLoad, error) {
	l, err := newTimerLoad(w, pid)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func newForkKind(w Workload, _ int) (kindLoad, error) {
	return &forkLoad{w: w, params: *w.Params.(*Fork)}, nil
}

// newNoiseKind's hogs are the runner's, set by newRunner.
func newNoiseKind(Workload, int) (kindLoad, error) { return &noiseLoad{}, nil }

// noiseLoad is the noise kind: the hogs alone.
type noiseLoad struct {
	hogs *hogs
}

func (l *noiseLoad) run(ctx context.Context) (Stats, error) {
	stop, err := l.hogs.start()
	if err != nil {
		return Stats{}, err
	}
	<-ctx.Done()
	return stop()
}

func (l *noiseLoad) threads() int { return 0 }
func (l *noiseLoad) close() error { return nil }

// CheckAllowedCPUs checks that this process may run on each of a
// workload's cpus, so that a CPU the machine (or a VM's vCPU count, or a
// cpuset) does not have fails before the tracers are attached.
func CheckAllowedCPUs(cpus []int) error {
	if cpus == nil {
		return nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("workload cpus: sched_getaffinity: %w", err)
	}
	var allowed []int
	for c := 0; c <= maxCPU && len(allowed) < set.Count(); c++ {
		if set.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	for _, c := range cpus {
		if !set.IsSet(c) {
			return &CPUsError{CPU: c, Allowed: FormatCPUList(allowed)}
		}
	}
	return nil
}

// CPUsError is a workload's cpus naming a CPU this process may not run on:
// bad input for this machine.
type CPUsError struct {
	CPU     int
	Allowed string
}

func (e *CPUsError) Error() string {
	return fmt.Sprintf("workload cpus: CPU %d is not one this process may run on (%s); list CPUs of this machine, or leave cpus out", e.CPU, e.Allowed)
}
