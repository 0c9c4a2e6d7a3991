package scenarios

import (
	"github.com/tailgate-ci/tailgate/internal/config"
)

// parseTCPRRKind is the tcp-rr kind's WorkloadKind.Parse.
func parseTCPRRKind(_ config.Node, fs []config.Field) (any, error) {
	p, err := parseTCPRR(fs)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// parseTCPRR reads the tcp-rr kind's own keys (request, response, nagle)
// from fs into a TCPRR, defaults filled in; pairs is left to the scenario
// parser.
func parseTCPRR(fs []config.Field) (*TCPRR, error) {
	p := &TCPRR{}
	for _, f := range fs {
		var err error
		switch f.Key {
		case "request":
			p.Request, err = f.Int(1, maxTCPRRMessage)
		case "response":
			p.Response, err = f.Int(1, maxTCPRRMessage)
		case "nagle":
			p.Nagle, err = f.Bool()
		}
		if err != nil {
			return nil, err
		}
	}
	d := p.withDefaults()
	return &d, nil
}
