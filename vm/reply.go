package vm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Everything a guest sends is untrusted input: the kernel under test, or
// the code it runs, may be broken or hostile. Its reply is bounded in
// size, decoded strictly and checked as a Result file is (result.Parse),
// so that a bad one is an error naming the guest, never a panic of the
// host or a Result that is not one.

// Limits of what the host reads from a guest.
const (
	// maxReply is the largest results file read: one frame holding a
	// Result as large as result.Load reads.
	maxReply = frameHdrLen + frameMaxBody
	// maxKallsyms is the largest kallsyms file kept: a Debian kernel's
	// own symbols take about 6 MB.
	maxKallsyms = 64 << 20
	// maxGuestMessage is the longest failure message shown, in bytes.
	maxGuestMessage = 4 << 10
)

// ErrBadReply means a guest's reply is not a valid answer: too large, not
// one intact frame (ErrBadFrame), or a payload that is not a valid Result
// or failure.
var ErrBadReply = errors.New("bad reply from guest")

// readReply reads the results file QEMU wrote for the guest, refusing one
// over maxReply bytes, from its size before it is read.
func readReply(path string) ([]byte, error) {
	return readCapped(path, maxReply)
}

// readCapped reads at most limit bytes of the file at path; a larger file
// is an ErrBadReply.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadReply, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBadReply, limit)
	}
	return b, nil
}

// parseReply decodes the guest's reply raw (not empty). A result frame
// gives res; an error frame gives the guest's failure message and what it
// measured before it (res, possibly nil). Anything else, including a
// partial Result that is not valid, is an error wrapping ErrBadReply, and
// then res is nil.
func parseReply(raw []byte) (res *result.Result, failure string, err error) {
	kind, payload, err := decodeFrame(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	if kind == frameResult {
		res, err := result.Parse(payload)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %w", ErrBadReply, err)
		}
		return res, "", nil
	}
	// The failure's Result is raw, for result.Parse to check as it checks
	// a result frame's.
	var gf struct {
		Error  string          `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&gf); err != nil {
		return nil, "", fmt.Errorf("%w: error frame: %v", ErrBadReply, err)
	}
	if dec.More() {
		return nil, "", fmt.Errorf("%w: error frame: data after the failure", ErrBadReply)
	}
	failure = guestMessage(gf.Error)
	if len(gf.Result) == 0 || string(gf.Result) == "null" {
		return nil, failure, nil
	}
	res, err = result.Parse(gf.Result)
	if err != nil {
		return nil, "", fmt.Errorf("%w: error frame (%q): partial result: %w", ErrBadReply, failure, err)
	}
	return res, failure, nil
}

// guestMessage is a guest's failure message fit to print, one line: at
// most maxGuestMessage bytes of valid UTF-8, each line break "; " (as
// errors.Join's are, plaintext.Message), control characters but tab shown
// as escapes, so that it cannot rewrite the terminal or forge lines of the
// host's own, nor start a line of a CI log with a command.
func guestMessage(s string) string {
	if s == "" {
		return "the guest gave no reason"
	}
	var b strings.Builder
	for i, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if i >= maxGuestMessage {
			b.WriteString(" [cut]")
			break
		}
		switch {
		case r == '\n':
			b.WriteString("; ")
		case r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
