//go:build linux && amd64

package scenarios

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// timerLoad is the timer kind, in the manner of cyclictest: each thread
// sleeps to absolute deadlines Interval apart with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) and records how late it
// woke. A deadline missed entirely is skipped, not caught up. With sleep:
// raw (the default) the thread calls clock_nanosleep as cyclictest does,
// straight into the kernel; see sleepUntilRaw.
type timerLoad struct {
	w      Workload
	params Timer
	pid    int
	clk    monoClock
	// start is the clock when the run began: thread i's deadlines are
	// start + i·Interval/Threads + k·Interval, so that the threads' wakeups
	// are spread evenly over the interval and no two contend for a CPU.
	start int64
	// dma holds /dev/cpu_dma_latency at params.DMALatency until closed; nil
	// when left alone.
	dma    *os.File
	locked bool // mlockall done, munlockall at close
}

// dmaLatencyPath is the PM QoS file whose open writers bound the exit
// latency of the idle states every CPU may enter.
const dmaLatencyPath = "/dev/cpu_dma_latency"

func newTimerLoad(w Workload, pid int) (*timerLoad, error) {
	params := *w.Params.(*Timer)
	clk, err := newMonoClock()
	if err != nil {
		return nil, err
	}
	if err := CheckAllowedCPUs(w.CPUs); err != nil {
		return nil, err
	}
	if params.Priority > 0 {
		// Fail now rather than after the tracers are attached.
		errc := make(chan error)
		go func() {
			runtime.LockOSThread()
			// No unlock: the thread ends with the goroutine and takes
			// its SCHED_FIFO policy with it.
			errc <- setFIFO(params.Priority)
		}()
		if err := <-errc; err != nil {
			return nil, err
		}
	}
	if params.Sleep == TimerSleepRaw && asyncPreemptOff(os.Getenv("GODEBUG")) {
		return nil, errors.New("timer sleep raw: GODEBUG has asyncpreemptoff=1, which stops the signals that end a raw sleep for a stop of the world; unset it or set sleep: runtime")
	}
	l := &timerLoad{w: w, params: params, pid: pid, clk: clk}
	if err := l.hold(); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// hold locks memory and holds the idle-state bound, as cyclictest does, so
// that neither a page fault nor a deep idle state's exit is in a wakeup.
func (l *timerLoad) hold() error {
	if l.params.MLock == nil || *l.params.MLock {
		if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
			return fmt.Errorf("timer mlock: mlockall: %w; run as root (CAP_IPC_LOCK) or set mlock: false", err)
		}
		l.locked = true
	}
	if l.params.DMALatency == nil || *l.params.DMALatency == DMALatencyLeave {
		return nil
	}
	d := *l.params.DMALatency
	f, err := os.OpenFile(dmaLatencyPath, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("timer dma_latency %d: %w; run as root or set dma_latency: -1", d, err)
	}
	// The kernel reads the bound as a native s32 (µs) and holds it while
	// the file is open.
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(int32(d)))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return fmt.Errorf("timer dma_latency %d: write %s: %w", d, dmaLatencyPath, err)
	}
	l.dma = f
	return nil
}

// setFIFO makes the calling thread SCHED_FIFO at priority prio.
func setFIFO(prio int) error {
	param := struct{ priority int32 }{int32(prio)}
	_, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO, uintptr(unsafe.Pointer(&param)))
	if e == 0 {
		return nil
	}
	if errors.Is(e, os.ErrPermission) {
		return fmt.Errorf("timer priority %d: sched_setscheduler(SCHED_FIFO): %w; run as root (CAP_SYS_NICE) or set priority: 0", prio, e)
	}
	return fmt.Errorf("timer priority %d: sched_setscheduler(SCHED_FIFO): %w", prio, e)
}

func (l *timerLoad) threads() int { return l.w.Threads }

// close lets go of the idle-state bound and the memory lock.
func (l *timerLoad) close() error {
	var errs []error
	if l.dma != nil {
		if err := l.dma.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", dmaLatencyPath, err))
		}
		l.dma = nil
	}
	if l.locked {
		if err := unix.Munlockall(); err != nil {
			errs = append(errs, fmt.Errorf("munlockall: %w", err))
		}
		l.locked = false
	}
	return firstError(errs)
}

func (l *timerLoad) run(ctx context.Context) (Stats, error) {
	l.start = l.clk.now()
	return runCrew(withPinCPUs(ctx, l.w.CPUs), l.pid, l.w.Threads, l.thread, nil)
}

func (l *timerLoad) thread(i int, c *crew, m *member) {
	if l.params.Priority > 0 {
		m.exitThread = true // never hand a SCHED_FIFO thread back to Go
		m.sys["sched_setscheduler"]++
		if err := setFIFO(l.params.Priority); err != nil {
			m.err = err
			return
		}
	}
	// A SCHED_OTHER thread's sleeps may end up to its timer slack (50µs
	// by default) late, by design; that is policy, not latency, and
	// cyclictest's SCHED_FIFO threads have none. Take it down to 1ns for
	// the run and put it back before the thread returns to Go.
	m.sys["prctl"]++
	slack, _, _ := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0)
	m.sys["prctl"]++
	if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0); e != 0 {
		m.err = fmt.Errorf("prctl(PR_SET_TIMERSLACK): %w", e)
		return
	}
	defer func() {
		m.sys["prctl"]++
		if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, slack, 0); e != 0 {
			m.exitThread = true // it cannot be put back: let the thread go
		}
	}()
	late := hist.New()
	m.hists = map[string]*hist.Histogram{MetricTimerLateness: late}
	c.sleeper(i, m)
	raw := l.params.Sleep == TimerSleepRaw
	interval := int64(l.params.Interval)
	next := firstDeadline(l.start, l.clk.now(), interval, i, l.w.Threads)
	yielded := next
	for !c.stop.Load() {
		var err error
		if raw {
			err = sleepUntilRaw(next, m)
		} else {
			err = sleepUntil(next, m)
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				if raw {
					// The runtime signals to stop the world or preempt:
					// be stopped here, where it costs no lateness, not
					// after the next wakeup.
					runtime.Gosched()
				}
				continue // look at stop, then sleep to the same deadline
			}
			m.err = fmt.Errorf("clock_nanosleep: %w", err)
			return
		}
		now := l.clk.now()
		// The kernel never wakes a sleeper early; a negative reading is
		// the few ns of error in the clock offset.
		late.Record(uint64(max(now-next, 0)))
		m.ops++
		next += interval
		if next <= now {
			next += ((now-next)/interval + 1) * interval
		}
		if raw && now-yielded >= rawYieldEvery {
			// Go through the scheduler, outside the measured window (the
			// next sleep is to an absolute deadline), so that sysmon never
			// sees this goroutine running for 10 ms and preempts it with a
			// signal, which could land between a wakeup and the reading of
			// the clock.
			runtime.Gosched()
			yielded = now
		}
	}
}

// firstDeadline is thread i of n's first deadline after now: the first of
// start + i·interval/n + k·interval that is later than now, so that each
// thread sleeps at least a little before its first measured wakeup and
// the n threads' deadlines are interval/n apart.
func firstDeadline(start, now, interval int64, i, n int) int64 {
	phase := start + int64(i)*interval/int64(n)
	if now < phase {
		return phase
	}
	return phase + ((now-phase)/interval+1)*interval
}

// rawYieldEvery is how often, at most, a timer thread that sleeps raw goes
// through the scheduler: sysmon preempts a goroutine it has seen on one
// schedtick for 10 ms, looking at most 10 ms apart, so a yield every 5 ms
// keeps it from ever doing so. Not at every wakeup: each yield hands the
// P to another thread and waits to get it back.
const rawYieldEvery = int64(5 * time.Millisecond)

// asyncPreemptOff reports whether godebug (GODEBUG's value) turns off the
// runtime's preemption signals; its last asyncpreemptoff setting counts, as
// in the runtime.
func asyncPreemptOff(godebug string) bool {
	off := false
	for kv := range strings.SplitSeq(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "asyncpreemptoff="); ok {
			off = v == "1"
		}
	}
	return off
}

// sleepUntilRaw is sleepUntil without the Go runtime's syscall path, as
// cyclictest sleeps: the goroutine keeps its P, so no exitsyscall slow
// path runs between the wakeup and the clock read (what that path costs,
// counted: BENCHMARKS.md, "Timer workload against cyclictest"). The
// runtime's SIGURG (a stop of the world, a stack scan) ends such a sleep
// with EINTR, never restarted (signal(7)): the caller yields and sleeps
// again to the same deadline. Without those signals
// (GODEBUG=asyncpreemptoff=1) nothing would end it, so newTimerLoad
// refuses a raw sleep then.
func sleepUntilRaw(deadline int64, m *member) error {
	ts := unix.NsecToTimespec(deadline)
	m.sys["clock_nanosleep"]++
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
