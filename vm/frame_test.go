package vm

import (
	"bytes"
	"errors"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    byte
		payload []byte
	}{
		{"result", frameResult, []byte(`{"schema":1}`)},
		{"error", frameError, []byte(`{"error":"boom"}`)},
		{"empty", frameResult, nil},
		{"large", frameResult, bytes.Repeat([]byte("x"), 1<<20+3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeFrame(&buf, tc.kind, tc.payload); err != nil {
				t.Fatal(err)
			}
			kind, payload, err := decodeFrame(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if kind != tc.kind || !bytes.Equal(payload, tc.payload) {
				t.Errorf("got kind %q, %d bytes", kind, len(payload))
			}
		})
	}
}

func TestFrameCorrupt(t *testing.T) {
	good := encodeFrame(frameResult, []byte(`{"schema":1,"scenarios":[]}`))
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"header cut", good[:10]},
		{"payload cut", good[:len(good)-1]},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
		{"wrong magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"unknown kind", mutate(func(b []byte) []byte { b[4] = 'Z'; return b })},
		{"kind flipped", mutate(func(b []byte) []byte { b[4] = frameError; return b })},
		{"reserved set", mutate(func(b []byte) []byte { b[6] = 1; return b })},
		{"checksum", mutate(func(b []byte) []byte { b[20] ^= 1; return b })},
		{"payload bit", mutate(func(b []byte) []byte { b[len(b)-3] ^= 0x40; return b })},
		{"huge length", mutate(func(b []byte) []byte { b[15] = 0x7f; return b })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, payload, err := decodeFrame(tc.b)
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("decode = %q, %d bytes, %v; want ErrBadFrame", kind, len(payload), err)
			}
			if payload != nil {
				t.Errorf("partial payload returned with the error")
			}
		})
	}
}

// FuzzDecodeFrame checks that decoding never panics and that whatever it
// accepts re-encodes to exactly the input.
func FuzzDecodeFrame(f *testing.F) {
	f.Add(encodeFrame(frameResult, []byte(`{"schema":1}`)))
	f.Add(encodeFrame(frameError, []byte(`{"error":"x"}`)))
	f.Add([]byte("TGF1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, payload, err := decodeFrame(b)
		if err != nil {
			if payload != nil {
				t.Fatal("payload with error")
			}
			return
		}
		if !bytes.Equal(encodeFrame(kind, payload), b) {
			t.Fatal("accepted frame does not re-encode to the input")
		}
	})
}
