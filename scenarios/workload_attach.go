package scenarios

import (
	"errors"
	"fmt"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Attach is what the attach kind measures: a process that runs already,
// with the processes it has forked and forks, or an existing cgroup v2
// group, for the trial's duration; tailgate starts nothing of its own.
// tailgate run --pid and --cgroup put it in place of a scenario's
// workload; a scenario file cannot name it (a pid means nothing in a
// file).
type Attach struct {
	PID    int    `json:"pid,omitempty"`
	Cgroup string `json:"cgroup,omitempty"` // the group's directory
}

// Canonical is a without the pid, for Params: a service measured again
// after a restart is the same measurement. A group's path stays.
func (a *Attach) Canonical() any {
	if a.PID != 0 {
		return &struct {
			Process bool `json:"process"`
		}{true}
	}
	return a
}

var attachKind = WorkloadKind{
	Name:     "attach",
	Internal: true,
	Whole:    "the process measured runs by itself",
	Keys:     []string{"pid", "cgroup"},
	Parse: func(at config.Node, _ []config.Field) (any, error) {
		return nil, at.Errorf("workload kind attach is what tailgate run --pid PID and --cgroup PATH measure; it is not written in a scenario file")
	},
	DecodeParams: decodeParams[Attach],
	Check: func(w Workload) error {
		a, ok := w.Params.(*Attach)
		switch {
		case !ok:
			return errors.New("attach workload without its parameters (pid or cgroup)")
		case (a.PID != 0) == (a.Cgroup != ""):
			return errors.New("attach takes one of a pid and a cgroup")
		case a.PID < 0:
			return fmt.Errorf("attach: bad pid %d", a.PID)
		}
		return nil
	},
	New: newAttachKind,
	// The tracers count the process or group, not this process's threads.
	ThreadsAttributable: func(Workload) bool { return false },
}

// AttachWorkload returns the workload that measures a, in place of a
// scenario's.
func AttachWorkload(a Attach) Workload {
	return Workload{Kind: attachKind.Name, Params: &a}
}
