// goexits holds Go functions whose exits the return-site finder's tests
// know from their source.
package main

import (
	"fmt"
	"io"
	"os"
)

var sink int

// twoReturns returns from two places; the compiler gives each return its
// own epilogue.
//
//go:noinline
func twoReturns(x int) int {
	if x > 10 {
		sink += x
		return x * 3
	}
	sink -= x
	return sink
}

// spill needs a frame and a stack check: its entry may grow the stack.
//
//go:noinline
func spill(n int) int {
	var buf [512]byte
	for i := range buf {
		buf[i] = byte(n + i)
	}
	if n > 0 {
		return spill(n-1) + int(buf[n%len(buf)])
	}
	return int(buf[0])
}

type reader struct{ n int }

//go:noinline
func (r *reader) Read(p []byte) (int, error) {
	r.n += len(p)
	return len(p), nil
}

// embeds promotes (*reader).Read: (*embeds).Read is a wrapper the
// compiler writes, which ends in a tail call to (*reader).Read.
type embeds struct{ *reader }

// readers keeps the compiler from knowing which Read main calls.
var readers = []io.Reader{&embeds{&reader{}}, os.Stdin}

func main() {
	n, _ := readers[len(os.Args)%2].Read(make([]byte, len(os.Args)))
	fmt.Println(twoReturns(len(os.Args)), spill(n), sink)
}
