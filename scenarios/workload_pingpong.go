package scenarios

import "github.com/tailgate-ci/tailgate/internal/config"

// Pingpong is the pingpong workload kind's own parameters: the channel a
// pair of threads wakes each other through. Its pairs and cpus are
// Workload's fields.
//
//	workload:
//	  kind: pingpong
//	  channel: pipe   # pipe, eventfd, futex; default pipe
//	  pairs: 1        # thread pairs, a channel each
//	  cpus: 0-1       # a CPU list the threads are pinned to
type Pingpong struct {
	Channel string `json:"channel,omitempty"`
}

// pingpongChannels are the channels of the pingpong kind.
var pingpongChannels = []string{"pipe", "eventfd", "futex"}

var pingpongKind = WorkloadKind{
	Name:         "pingpong",
	Keys:         []string{"channel", "pairs", "cpus"},
	Parse:        parsePingpong,
	DecodeParams: decodeParams[Pingpong],
	Defaults: func(w *Workload) {
		if w.Pairs == 0 {
			w.Pairs = DefaultPairs
		}
		p, ok := paramsCopy[Pingpong](*w)
		if !ok {
			return
		}
		if p.Channel == "" {
			p.Channel = DefaultChannel
		}
		w.Params = p
	},
	Check: func(w Workload) error {
		p, err := kindParams[Pingpong](w)
		if err != nil {
			return err
		}
		return firstError([]error{checkOneOf("channel", p.Channel, pingpongChannels), checkIntRange("pairs", w.Pairs, 1, maxPairs), checkCPUs(w.CPUs)})
	},
	New: newPingpongKind,
}

// parsePingpong is the pingpong kind's WorkloadKind.Parse.
func parsePingpong(_ config.Node, fs []config.Field) (any, error) {
	p := &Pingpong{}
	for _, f := range fs {
		if f.Key == "channel" {
			var err error
			if p.Channel, err = f.OneOf("pingpong channel", pingpongChannels); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}
