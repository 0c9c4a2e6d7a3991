//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// ErrNoProcess reports that the process attach names does not run.
var ErrNoProcess = errors.New("no such process")

// attachLoad is the attach kind: nothing runs, the tracers count what
// already does.
type attachLoad struct {
	a     *Attach
	group *cgroup.Group // with Cgroup
	start string        // the process's start time, with PID
}

func newAttachKind(w Workload, _ int) (kindLoad, error) {
	a := w.Params.(*Attach) // checked
	l := &attachLoad{a: a}
	if a.Cgroup != "" {
		g, err := cgroup.Open(a.Cgroup)
		if err != nil {
			return nil, err
		}
		l.group = g
		return l, nil
	}
	st, err := procStart(a.PID)
	if err != nil {
		return nil, err
	}
	l.start = st
	return l, nil
}

// procStart returns the start time (field 22 of /proc/PID/stat) of a live
// process: it tells the process from a later one with its pid.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 20 {
		return "", fmt.Errorf("pid %d: unreadable /proc/%d/stat", pid, pid)
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", fmt.Errorf("pid %d: %w (it has exited)", pid, ErrNoProcess)
	}
	return f[19], nil
}

func (l *attachLoad) tasks() Tasks {
	if l.group != nil {
		return Tasks{CgroupID: l.group.ID, Cgroup: l.group.Path}
	}
	return Tasks{PID: l.a.PID}
}

func (l *attachLoad) run(ctx context.Context) (Stats, error) {
	<-ctx.Done()
	st := Stats{Syscalls: map[string]uint64{}}
	// What was measured is cut short if the process is gone: the trial
	// does not count.
	if l.group != nil {
		if _, err := os.Stat(l.group.Path); err != nil {
			return st, fmt.Errorf("cgroup %s was removed during the trial", l.group.Path)
		}
		return st, nil
	}
	if s, err := procStart(l.a.PID); err != nil || s != l.start {
		return st, fmt.Errorf("process %d exited during the trial", l.a.PID)
	}
	return st, nil
}

func (l *attachLoad) threads() int { return 0 }
func (l *attachLoad) close() error { return nil }
