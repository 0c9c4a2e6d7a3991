package loadfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ghzReport is what tailgate reads of ghz's --format json report: a
// detail per request, its latency in ns and its gRPC status.
type ghzReport struct {
	Count   *uint64 `json:"count"`
	Details []struct {
		Latency *int64 `json:"latency"`
		Error   string `json:"error"`
		Status  string `json:"status"`
	} `json:"details"`
}

// parseGhz reads ghz's JSON report. A request whose status is not OK is
// a failure. Its latency is ghz's: from the time the call started.
func parseGhz(name string, b []byte, l *Latencies) error {
	var r ghzReport
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return &Error{name, lineOf(b, se.Offset), "not ghz's JSON report: " + se.Error()}
		case errors.As(err, &te):
			return &Error{name, lineOf(b, te.Offset), fmt.Sprintf("%s must be %s, got %s", te.Field, te.Type, te.Value)}
		}
		return &Error{Name: name, Msg: "not ghz's JSON report: " + err.Error()}
	}
	if r.Count == nil {
		return &Error{name, 1, "not ghz's JSON report (ghz --format json): no count"}
	}
	if r.Details == nil && *r.Count > 0 {
		return &Error{name, 1, "ghz's report has no details, the latency of each request; run ghz with --format json (its details are left out with --skipFirst or a summary format)"}
	}
	for i, d := range r.Details {
		switch {
		case d.Status != "OK":
			what := d.Error
			if what == "" {
				what = "status " + d.Status
			}
			l.fail(what)
		case d.Latency == nil:
			return &Error{Name: name, Msg: fmt.Sprintf("detail %d has no latency", i+1)}
		default:
			if err := record(l, float64(*d.Latency)); err != nil {
				return &Error{Name: name, Msg: fmt.Sprintf("detail %d: %v", i+1, err)}
			}
		}
	}
	return nil
}
