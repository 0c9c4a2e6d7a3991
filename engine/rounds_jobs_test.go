package engine

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// atOnceTarget is a fake target that says whether its trials may run at
// once, and counts how many of all such targets' trials run together.
type atOnceTarget struct {
	*fakeTarget
	why           string
	running, peak *atomic.Int32
}

func (a atOnceTarget) Independent() string { return a.why }

func (a atOnceTarget) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	n := a.running.Add(1)
	defer a.running.Add(-1)
	for {
		if old := a.peak.Load(); n <= old || a.peak.CompareAndSwap(old, n) {
			break
		}
	}
	return a.fakeTarget.Run(ctx, req, p)
}

// A round's trials run at once, up to Plan.Jobs, only when every target
// is Independent; each target still gets its trials of every round.
func TestRoundsRunIndependentTrialsAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name     string
		whyB     string
		jobs     int
		wantPeak int32
	}{
		{"independent, 2 jobs", "", 2, 2},
		{"independent, 1 job", "", 1, 1},
		{"one measures the machine", "its clock is real", 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var running, peak atomic.Int32
			mk := func(name, why string) Target {
				return atOnceTarget{&fakeTarget{name: name, log: &[]string{}, sleep: 100 * time.Millisecond}, why, &running, &peak}
			}
			ts := []Target{mk("A", ""), mk("B", tt.whyB)}
			res, ran, err := Rounds(context.Background(), ts, spec(3), Plan{Rounds: 3, Jobs: tt.jobs}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := peak.Load(); got != tt.wantPeak {
				t.Errorf("%d trials ran at once at most, want %d", got, tt.wantPeak)
			}
			if ran.Rounds != 3 {
				t.Errorf("ran %d rounds, want 3", ran.Rounds)
			}
			for i, r := range res {
				if s := r.Find("a"); s == nil || s.Trials != 3 {
					t.Errorf("target %d: %+v, want 3 trials of a", i, s)
				}
			}
		})
	}
}
