package scenarios

import "context"

// Tasks names the tasks a workload's events happen in, when they are not
// the threads of the process that runs it.
type Tasks struct {
	// PID is a process counted with all its threads and the processes it
	// forks (attach --pid).
	PID int
	// CgroupID is a cgroup v2 group (its directory's inode) counted with
	// every task in it and in the groups below it: the exec kind's, or
	// attach --cgroup's.
	CgroupID uint64
	// Cgroup is the group's path, for messages.
	Cgroup string
}

// taskLoad is a kindLoad whose work runs outside this process.
type taskLoad interface {
	tasks() Tasks
}

// startLoad is a kindLoad with something to start before each run's clock
// starts.
type startLoad interface {
	start(ctx context.Context) error
}
