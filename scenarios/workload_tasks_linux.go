//go:build linux && amd64

package scenarios

import "context"

// TasksOf returns the tasks r's work runs in when they are not r's own
// threads: the exec kind's group, the process or group attach names. ok
// is false for the kinds that run in this process.
func TasksOf(r Runner) (t Tasks, ok bool) {
	rr, ok := r.(*runner)
	if !ok {
		return Tasks{}, false
	}
	tl, ok := rr.load.(taskLoad)
	if !ok {
		return Tasks{}, false
	}
	return tl.tasks(), true
}

// Start starts what r's next Run measures, so that the Run's clock, and
// the tracers' counts reset after Start returns, begin once it is ready:
// the exec kind's command, up to its ready check. It is nil for the kinds
// with nothing to start; Run starts what was not started.
func Start(ctx context.Context, r Runner) error {
	rr, ok := r.(*runner)
	if !ok {
		return nil
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.closed {
		return ErrClosed
	}
	sl, ok := rr.load.(startLoad)
	if !ok {
		return nil
	}
	return sl.start(ctx)
}
