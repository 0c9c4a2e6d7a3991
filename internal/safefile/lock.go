package safefile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultLockWait is how long Lock waits for a lock another process holds
// when the caller gives no wait of its own: a store's writer holds its
// lock for the seconds a write takes, so a longer hold is one to name,
// not one to wait out.
const DefaultLockWait = 2 * time.Minute

// LockError is a lock Lock did not take: its holder kept it past the
// wait, or the caller's context ended (a SIGINT or SIGTERM) while it
// waited. It unwraps to ErrLockTimeout or the context's error.
type LockError struct {
	Path   string
	Holder Holder
	Waited time.Duration
	Err    error
}

// ErrLockTimeout is a lock still held at the end of the wait.
var ErrLockTimeout = errors.New("still locked")

func (e *LockError) Error() string {
	if errors.Is(e.Err, ErrLockTimeout) {
		return fmt.Sprintf("%s is still locked after %v by %s; stop that process or wait for it, then run again", e.Path, e.Waited.Round(time.Millisecond), e.Holder)
	}
	return fmt.Sprintf("interrupted while waiting for %s, which %s holds (%v); nothing written", e.Path, e.Holder, e.Err)
}

func (e *LockError) Unwrap() error { return e.Err }

// Holder is a process that holds a lock, as the kernel names it
// (/proc/locks), not as the lock file says: a file's content is the
// word of whoever could write it.
type Holder struct {
	PID     int
	UID     int // -1 when unknown
	Command string
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "a process this one cannot see"
	}
	s := "pid " + strconv.Itoa(h.PID)
	if h.Command != "" {
		s += " (" + strconv.Quote(h.Command)
		if h.UID >= 0 {
			s += ", uid " + strconv.Itoa(h.UID)
		}
		s += ")"
	}
	return s
}

// Lock takes the flock how (unix.LOCK_EX or unix.LOCK_SH) of f. While
// another process holds it, Lock calls waiting once with the holder, and
// tries again until it gets the lock, ctx ends or wait (DefaultLockWait
// when 0) has passed; then it returns a *LockError naming the holder.
// A blocking flock would not end on SIGINT or SIGTERM (Go restarts it),
// so the lock is polled.
func Lock(ctx context.Context, f *os.File, how int, wait time.Duration, waiting func(Holder)) error {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	start := time.Now()
	delay := 5 * time.Millisecond
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			return &os.PathError{Op: "lock", Path: f.Name(), Err: err}
		}
		if waiting != nil {
			waiting(LockHolder(f))
			waiting = nil
		}
		waited := time.Since(start)
		if waited >= wait {
			return &LockError{Path: f.Name(), Holder: LockHolder(f), Waited: waited, Err: ErrLockTimeout}
		}
		t := time.NewTimer(min(delay, wait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return &LockError{Path: f.Name(), Holder: LockHolder(f), Waited: time.Since(start), Err: ctx.Err()}
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// LockHolder is the process that holds a flock of f's file, read from
// /proc/locks by the file's device and inode; PID 0 when none is seen.
func LockHolder(f *os.File) Holder {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return Holder{UID: -1}
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return Holder{UID: -1}
	}
	defer locks.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[1] == "->" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			continue
		}
		return processHolder(pid)
	}
	return Holder{UID: -1}
}

// processHolder names the process pid: its command and its real uid.
func processHolder(pid int) Holder {
	h := Holder{PID: pid, UID: -1}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		h.Command = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					h.UID, _ = strconv.Atoi(f[0])
				}
			}
		}
	}
	return h
}
