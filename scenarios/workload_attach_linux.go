//go:build linux && amd64

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/proc"
)

// ErrNoProcess reports that the process attach names does not run.
var ErrNoProcess = errors.New("no such process")

// attachLoad is the attach kind: nothing runs, the tracers count what
// already does.
type attachLoad struct {
	a     *Attach
	group *cgroup.Group // with Cgroup
	start uint64        // the process's start time, with PID
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

// procStart returns the start time of a live process: it tells the
// process from a later one with its pid.
func procStart(pid int) (uint64, error) {
	st, err := proc.ReadStat(pid)
	switch {
	case errors.Is(err, proc.ErrFormat):
		return 0, fmt.Errorf("pid %d: unreadable /proc/%d/stat", pid, pid)
	case err != nil:
		return 0, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	case st.Exited():
		return 0, fmt.Errorf("pid %d: %w (it has exited)", pid, ErrNoProcess)
	}
	return st.StartTime, nil
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
