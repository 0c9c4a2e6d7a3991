//go:build !(linux && amd64)

package scenarios

import "context"

// TasksOf reports no tasks: there are no workloads here.
func TasksOf(Runner) (Tasks, bool) { return Tasks{}, false }

// Start has nothing to start: there are no workloads here.
func Start(context.Context, Runner) error { return nil }
