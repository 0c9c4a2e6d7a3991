package loadfile

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// parseVegeta reads vegeta's results: JSON lines (vegeta encode), read a
// line at a time so that an error names its line, or the binary (gob)
// results of vegeta attack and the CSV of vegeta encode --to csv, read
// through vegeta's own decoders. A result with an error or an HTTP status
// of 400 or more is a failed request. Its latency is vegeta's: from the
// time a worker took the request's tick.
func parseVegeta(name string, b []byte, l *Latencies) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return vegetaJSON(name, b, l)
	}
	dec := vegeta.DecoderFor(bytes.NewReader(b))
	if dec == nil {
		return &Error{Name: name, Msg: "not vegeta results: neither its binary results, JSON lines (vegeta encode) nor CSV (vegeta encode --to csv)"}
	}
	for n := 1; ; n++ {
		var r vegeta.Result
		err := dec.Decode(&r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &Error{Name: name, Msg: fmt.Sprintf("result %d: %v", n, err)}
		}
		if err := vegetaResult(&r, l); err != nil {
			return &Error{Name: name, Msg: fmt.Sprintf("result %d: %v", n, err)}
		}
	}
}

func vegetaJSON(name string, b []byte, l *Latencies) error {
	for n, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r vegeta.Result
		// vegeta's decoder reads a line up to its newline.
		line = append(line, '\n')
		if err := vegeta.NewJSONDecoder(bytes.NewReader(line)).Decode(&r); err != nil {
			return &Error{name, n + 1, "not a vegeta result (vegeta encode's JSON): " + err.Error()}
		}
		if err := vegetaResult(&r, l); err != nil {
			return &Error{name, n + 1, err.Error()}
		}
	}
	return nil
}

func vegetaResult(r *vegeta.Result, l *Latencies) error {
	switch {
	case r.Code >= 400:
		l.fail("HTTP status " + strconv.Itoa(int(r.Code)) + " from " + r.URL)
		return nil
	case r.Error != "" || r.Code == 0:
		l.fail(r.Error)
		return nil
	}
	return record(l, float64(r.Latency))
}
