package vm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// The guest sends its answer to the host as one frame on the results port:
//
//	magic   [4]byte  "TGF1"
//	kind    byte     frameResult or frameError
//	_       [3]byte  zero
//	length  uint64   little endian, length of payload
//	sum     [32]byte sha256 of kind and payload
//	payload [length]byte
//
// The checksum covers the kind so that a flipped bit cannot turn an error
// into a result.
const (
	frameMagic   = "TGF1"
	frameHdrLen  = 4 + 4 + 8 + sha256.Size
	frameMaxBody = result.MaxSize // a Result as large as result.Load reads
)

// Frame kinds.
const (
	frameResult byte = 'R' // payload: a result.Result as JSON
	frameError  byte = 'E' // payload: a guestFailure as JSON
)

// ErrBadFrame means the bytes the guest sent are not one whole, intact frame.
var ErrBadFrame = errors.New("bad frame from guest")

// encodeFrame returns the frame carrying payload.
func encodeFrame(kind byte, payload []byte) []byte {
	b := make([]byte, frameHdrLen, frameHdrLen+len(payload))
	copy(b, frameMagic)
	b[4] = kind
	binary.LittleEndian.PutUint64(b[8:], uint64(len(payload)))
	sum := frameSum(kind, payload)
	copy(b[16:], sum[:])
	return append(b, payload...)
}

func frameSum(kind byte, payload []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{kind})
	h.Write(payload)
	var s [sha256.Size]byte
	h.Sum(s[:0])
	return s
}

// writeFrame writes one frame to w.
func writeFrame(w io.Writer, kind byte, payload []byte) error {
	_, err := w.Write(encodeFrame(kind, payload))
	return err
}

// decodeFrame decodes the one frame b must hold; anything else, a short or
// corrupt frame or bytes after it, is an error wrapping ErrBadFrame, so
// that a partial answer is never taken for a whole one.
func decodeFrame(b []byte) (kind byte, payload []byte, err error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("%w: empty", ErrBadFrame)
	}
	if len(b) < frameHdrLen {
		return 0, nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrBadFrame, len(b))
	}
	if !bytes.Equal(b[:4], []byte(frameMagic)) {
		return 0, nil, fmt.Errorf("%w: magic %q, want %q", ErrBadFrame, b[:4], frameMagic)
	}
	kind = b[4]
	if kind != frameResult && kind != frameError {
		return 0, nil, fmt.Errorf("%w: unknown kind %q", ErrBadFrame, kind)
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return 0, nil, fmt.Errorf("%w: reserved bytes set", ErrBadFrame)
	}
	n := binary.LittleEndian.Uint64(b[8:])
	if n > frameMaxBody {
		return 0, nil, fmt.Errorf("%w: length %d too large", ErrBadFrame, n)
	}
	body := b[frameHdrLen:]
	if uint64(len(body)) < n {
		return 0, nil, fmt.Errorf("%w: cut short: %d of %d payload bytes", ErrBadFrame, len(body), n)
	}
	if uint64(len(body)) > n {
		return 0, nil, fmt.Errorf("%w: %d bytes after the frame", ErrBadFrame, uint64(len(body))-n)
	}
	sum := frameSum(kind, body)
	if !bytes.Equal(sum[:], b[16:frameHdrLen]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	}
	return kind, body, nil
}
