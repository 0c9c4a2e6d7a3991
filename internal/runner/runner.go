// Package runner runs scenarios on the running kernel: it attaches the
// scenario's tracers, drives its workload for warmup and trials, and collects
// each trial's histograms into a Result. The host and the guest inside a VM
// run the same code.
package runner

import (
	"context"
	"errors"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Request is what to run.
type Request struct {
	Scenarios []*scenarios.Scenario
	Trials    int           // overrides each scenario's trials when > 0
	Duration  time.Duration // overrides each scenario's duration when > 0
	Warmup    time.Duration // overrides each scenario's warmup when ≥ 0 and WarmupSet
	WarmupSet bool
	Target    result.Target
	// Progress receives progress events; nil means none.
	Progress func(Event)
}

// Event is one step of progress.
type Event struct {
	Scenario string
	Trial    int // 1-based; 0 while warming up
	Trials   int
	Phase    string // "attach", "warmup", "trial", "done"
	Elapsed  time.Duration
	Total    time.Duration
}

// ErrNotImplemented is temporary.
var ErrNotImplemented = errors.New("not implemented")

// Run runs req. On error or cancellation it returns the Result measured so
// far (Partial set) together with the error.
func Run(ctx context.Context, req Request) (*result.Result, error) {
	return nil, ErrNotImplemented
}
