package scenarios

import "github.com/tailgate-ci/tailgate/internal/config"

// Fork is the fork workload kind's own parameters: what each thread
// creates and waits for, in a loop. Its threads are Workload's field.
//
//	workload:
//	  kind: fork
//	  mode: fork      # fork (a child that exits) or thread (a thread that exits); default fork
//	  threads: 1
type Fork struct {
	Mode string `json:"mode,omitempty"`
}

// forkModes are the modes of the fork kind.
var forkModes = []string{"fork", "thread"}

var forkKind = WorkloadKind{
	Name:         "fork",
	Keys:         []string{"mode", "threads"},
	Parse:        parseFork,
	DecodeParams: decodeParams[Fork],
	Defaults: func(w *Workload) {
		if w.Threads == 0 {
			w.Threads = DefaultThreads
		}
		p, ok := paramsCopy[Fork](*w)
		if !ok {
			return
		}
		if p.Mode == "" {
			p.Mode = DefaultMode
		}
		w.Params = p
	},
	Check: func(w Workload) error {
		p, err := kindParams[Fork](w)
		if err != nil {
			return err
		}
		return firstError([]error{checkOneOf("mode", p.Mode, forkModes), checkIntRange("threads", w.Threads, 1, maxThreads)})
	},
	New: newForkKind,
	// The Go runtime creates the threads of the thread mode, from threads
	// of its own choosing.
	ThreadsAttributable: func(w Workload) bool {
		p, ok := w.Params.(*Fork)
		return !ok || p == nil || p.Mode != "thread"
	},
}

// parseFork is the fork kind's WorkloadKind.Parse.
func parseFork(_ config.Node, fs []config.Field) (any, error) {
	p := &Fork{}
	for _, f := range fs {
		if f.Key == "mode" {
			var err error
			if p.Mode, err = f.OneOf("fork mode", forkModes); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// noiseKind is the noise workload kind: background CPU hogs alone
// (Workload.Noise), with no parameters of its own.
var noiseKind = WorkloadKind{
	Name: "noise",
	Defaults: func(w *Workload) {
		if w.Noise == 0 {
			w.Noise = NoiseNumCPU
		}
	},
	New: newNoiseKind,
}
