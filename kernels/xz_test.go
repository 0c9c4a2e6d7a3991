package kernels

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
)

// bcjTestData is machine-code-like data: random bytes with many CALL and
// JMP instructions whose operands are small relative offsets, the pattern
// the BCJ filter rewrites, some of them close together.
func bcjTestData() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b) < 40000 {
		switch r.IntN(4) {
		case 0:
			b = append(b, 0xe8|byte(r.IntN(2)))
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(r.IntN(1<<20)-1<<19)))
		case 1:
			b = append(b, 0xe8, 0xe8, 0xe9, 0x00, 0xff)
		default:
			for range r.IntN(16) {
				b = append(b, "\x48\x89\xe5\x8b\x45\xfc\x0f\x1f\x44"[r.IntN(9)])
			}
		}
	}
	return b
}

// testdata/bcj.xz is bcjTestData (VMTEST_WRITE_BCJ=1 writes it to
// testdata/bcj.raw) compressed by the xz tool:
// xz --format=xz --check=crc32 --x86 --lzma2=preset=6 -c
func TestDecodeXZKernel(t *testing.T) {
	want := bcjTestData()
	if os.Getenv("VMTEST_WRITE_BCJ") != "" {
		os.WriteFile("testdata/bcj.raw", want, 0o644)
	}
	z, err := os.ReadFile("testdata/bcj.xz")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeXZKernel(z)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		n := 0
		for n < min(len(got), len(want)) && got[n] == want[n] {
			n++
		}
		t.Fatalf("decoded %d bytes, want %d; first difference at %d", len(got), len(want), n)
	}
	// The data has operands for BCJ to change, so a decoder that skipped
	// the filter would fail the comparison above.
	again := append([]byte(nil), want...)
	unBCJx86(again, 0)
	if bytes.Equal(again, want) {
		t.Error("the test data has nothing for BCJ to change")
	}
	for _, bad := range [][]byte{nil, z[:11], append([]byte("\xfd7zXZ\x00"), make([]byte, 20)...)} {
		if _, err := decodeXZKernel(bad); err == nil {
			t.Errorf("decodeXZKernel(% x...) succeeded", bad[:min(len(bad), 8)])
		}
	}
}
