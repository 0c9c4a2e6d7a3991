package loadfile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strconv"
)

// parseHey reads hey's -o csv: a header line, then a row per answered
// request with its response-time in seconds (to 0.1 ms: hey prints four
// decimals) and its status-code. hey leaves requests that got an error
// out of the CSV, so only statuses of 400 or more show as failures; it
// also stops writing rows after a million.
func parseHey(name string, b []byte, l *Latencies) error {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return heyError(name, r, err)
	}
	rt, sc := slices.Index(header, "response-time"), slices.Index(header, "status-code")
	if rt < 0 || sc < 0 {
		return &Error{name, 1, "not hey's CSV (hey -o csv): the header has no response-time and status-code"}
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return heyError(name, r, err)
		}
		line, _ := r.FieldPos(0)
		if len(row) != len(header) {
			return &Error{name, line, "want " + strconv.Itoa(len(header)) + " fields as the header has, got " + strconv.Itoa(len(row))}
		}
		secs, err := strconv.ParseFloat(row[rt], 64)
		if err != nil {
			return &Error{name, line, "response-time " + strconv.Quote(row[rt]) + " is not a number of seconds"}
		}
		code, err := strconv.Atoi(row[sc])
		if err != nil {
			return &Error{name, line, "status-code " + strconv.Quote(row[sc]) + " is not a number"}
		}
		if code >= 400 || code < 100 {
			l.fail("HTTP status " + row[sc])
			continue
		}
		if err := record(l, secs*1e9); err != nil {
			return &Error{name, line, err.Error()}
		}
	}
}

func heyError(name string, r *csv.Reader, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{name, pe.Line, pe.Err.Error()}
	}
	if err == io.EOF {
		return &Error{Name: name, Msg: "empty; want hey's CSV (hey -o csv)"}
	}
	line, _ := r.FieldPos(0)
	return &Error{name, line, err.Error()}
}
