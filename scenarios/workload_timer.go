package scenarios

import (
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// Timer is the timer workload kind's own parameters: how often each
// thread sleeps to a deadline, at what priority, and what is held while
// it runs, as cyclictest's options say. Its threads and cpus are
// Workload's fields.
//
//	workload:
//	  kind: timer
//	  interval: 1ms     # between deadlines (default 1ms)
//	  priority: 0       # SCHED_FIFO 1-99; 0 (the default) is SCHED_OTHER
//	  mlock: true       # mlockall for the run (default true)
//	  dma_latency: 0    # µs held in /dev/cpu_dma_latency; -1 leaves it alone (default 0)
//	  sleep: raw        # raw or runtime (default raw)
//	  threads: 1
//	  cpus: "1"
type Timer struct {
	Interval time.Duration `json:"interval,omitempty"`
	Priority int           `json:"priority,omitempty"` // SCHED_FIFO priority; 0 = SCHED_OTHER
	// MLock locks the worker's memory for the run
	// (mlockall(MCL_CURRENT|MCL_FUTURE)), as cyclictest -m does; nil is
	// the default, true.
	MLock *bool `json:"mlock,omitempty"`
	// DMALatency is held in /dev/cpu_dma_latency, in µs, while the
	// workload is prepared, as cyclictest does; DMALatencyLeave leaves the
	// file alone. nil is the default, 0: no idle state with an exit
	// latency.
	DMALatency *int `json:"dma_latency,omitempty"`
	// Sleep is how the timer's threads sleep: TimerSleepRaw or
	// TimerSleepRuntime; "" is the default, DefaultTimerSleep.
	Sleep string `json:"sleep,omitempty"`
}

// timerSleeps are the timer's ways to sleep.
var timerSleeps = []string{TimerSleepRaw, TimerSleepRuntime}

var timerKind = WorkloadKind{
	Name:         "timer",
	Keys:         []string{"interval", "priority", "threads", "mlock", "dma_latency", "sleep", "cpus"},
	Parse:        parseTimer,
	DecodeParams: decodeParams[Timer],
	Defaults: func(w *Workload) {
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
		p, ok := paramsCopy[Timer](*w)
		if !ok {
			return
		}
		if p.Interval == 0 {
			p.Interval = DefaultInterval
		}
		if p.MLock == nil {
			on := DefaultMLock
			p.MLock = &on
		}
		if p.DMALatency == nil {
			d := DefaultDMALatency
			p.DMALatency = &d
		}
		if p.Sleep == "" {
			p.Sleep = DefaultTimerSleep
		}
		w.Params = p
	},
	Check: func(w Workload) error {
		p, err := kindParams[Timer](w)
		if err != nil {
			return err
		}
		return firstError([]error{checkInterval(p.Interval), checkIntRange("priority", p.Priority, 0, maxPriority),
			checkIntRange("threads", w.Threads, 1, maxThreads), checkIntRange("dma_latency", *p.DMALatency, DMALatencyLeave, maxDMALatency),
			checkOneOf("timer sleep", p.Sleep, timerSleeps), checkCPUs(w.CPUs)})
	},
	New:     newTimerKind,
	Metrics: []WorkloadMetric{{Name: MetricTimerLateness, Description: "user-space lateness of clock_nanosleep wakeups"}},
}

// parseTimer is the timer kind's WorkloadKind.Parse.
func parseTimer(_ config.Node, fs []config.Field) (any, error) {
	p := &Timer{}
	for _, f := range fs {
		var err error
		switch f.Key {
		case "interval":
			p.Interval, err = f.Duration(minInterval, maxInterval)
		case "priority":
			p.Priority, err = f.Int(0, maxPriority)
		case "mlock":
			b, ok := f.Value.AST().(*ast.BoolNode)
			if !ok {
				err = f.Value.Errorf("mlock must be true or false, got %s %q", f.Value.Describe(), f.Value.Text())
				break
			}
			p.MLock = &b.Value
		case "dma_latency":
			var d int
			d, err = f.Int(DMALatencyLeave, maxDMALatency)
			p.DMALatency = &d
			if err != nil {
				err = f.Value.Errorf("dma_latency must be an integer from 0 to %d µs held in /dev/cpu_dma_latency, or -1 to leave it alone, got %q", maxDMALatency, f.Value.Text())
			}
		case "sleep":
			p.Sleep, err = f.OneOf("timer sleep", timerSleeps)
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}
