package scenarios

import "fmt"

// MetricTCPRR is the tcp-rr workload's own metric: a client's round trip,
// from writing the request to reading the response's last byte.
const MetricTCPRR = "tcp.rr"

// TCPRR is the tcp-rr workload kind's own parameters: the sizes of its
// messages and whether Nagle's algorithm stays on. Its pairs are
// Workload's field, as for pingpong.
//
//	workload:
//	  kind: tcp-rr
//	  request: 64     # bytes the client sends per round trip (default 1)
//	  response: 4096  # bytes the server answers with (default 1)
//	  pairs: 1        # client/server thread pairs, a connection each
//	  nagle: false    # true leaves TCP_NODELAY off
type TCPRR struct {
	Request  int `json:"request"`
	Response int `json:"response"`
	// Nagle leaves Nagle's algorithm on; by default both ends set
	// TCP_NODELAY, as a request/response protocol does.
	Nagle bool `json:"nagle,omitempty"`
}

// tcpRRKind is the tcp-rr workload kind: request/response over loopback
// TCP between a client and a server thread per pair.
var tcpRRKind = WorkloadKind{
	Name:         "tcp-rr",
	Keys:         []string{"request", "response", "pairs", "nagle"},
	Parse:        parseTCPRRKind,
	DecodeParams: decodeParams[TCPRR],
	Defaults: func(w *Workload) {
		if w.Pairs == 0 {
			w.Pairs = DefaultPairs
		}
		if p, ok := paramsCopy[TCPRR](*w); ok {
			d := p.withDefaults()
			w.Params = &d
		}
	},
	Check: func(w Workload) error {
		p, err := kindParams[TCPRR](w)
		if err != nil {
			return err
		}
		return firstError([]error{checkIntRange("pairs", w.Pairs, 1, maxPairs), p.check()})
	},
	New: newTCPRRKind,
	Metrics: []WorkloadMetric{{
		Name:        MetricTCPRR,
		Description: "a client's round trip, request written to response read",
	}},
	// The round trip is a write and a read on each side.
	Syscalls: func(Workload) []string { return []string{"read", "write"} },
}

// Defaults of the tcp-rr kind: one byte each way, as netperf's TCP_RR.
const (
	DefaultTCPRRRequest  = 1
	DefaultTCPRRResponse = 1
)

// maxTCPRRMessage bounds request and response, as size bounds the syscall
// kind's buffers.
const maxTCPRRMessage = 1 << 20

// withDefaults returns p with zero sizes set to the defaults.
func (p TCPRR) withDefaults() TCPRR {
	if p.Request == 0 {
		p.Request = DefaultTCPRRRequest
	}
	if p.Response == 0 {
		p.Response = DefaultTCPRRResponse
	}
	return p
}

// check validates p, with defaults filled in, as built in Go; the parser
// checks the same with positions.
func (p TCPRR) check() error {
	return firstError([]error{checkMessageSize("request", p.Request), checkMessageSize("response", p.Response)})
}

func checkMessageSize(what string, n int) error {
	if n < 1 || n > maxTCPRRMessage {
		return fmt.Errorf("%s must be from 1 to %d bytes, got %d", what, maxTCPRRMessage, n)
	}
	return nil
}
