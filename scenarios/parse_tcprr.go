package scenarios

import (
	"encoding/json"

	"github.com/goccy/go-yaml/ast"

	"github.com/tailgate-ci/tailgate/internal/config"
)

// parseTCPRRKind is the tcp-rr kind's WorkloadKind.Parse: it reads the
// kind's own keys into w.Params.
func parseTCPRRKind(w *Workload, _ config.Node, fs []config.Field) error {
	p, err := parseTCPRR(fs)
	if err != nil {
		return err
	}
	w.Params = p
	return nil
}

// decodeTCPRR is the tcp-rr kind's WorkloadKind.DecodeParams: TCPRR's
// members of the workload's JSON object.
func decodeTCPRR(b []byte) (any, error) {
	p := &TCPRR{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, err
	}
	return p, nil
}

// parseTCPRR reads the tcp-rr kind's own keys (request, response, nagle)
// from fs into a TCPRR, defaults filled in; other keys are left to the
// scenario parser.
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
			b, ok := f.Value.AST().(*ast.BoolNode)
			if !ok {
				err = f.Value.Errorf("nagle must be true or false, got %s %q", f.Value.Describe(), f.Value.Text())
				break
			}
			p.Nagle = b.Value
		}
		if err != nil {
			return nil, err
		}
	}
	d := p.withDefaults()
	return &d, nil
}
