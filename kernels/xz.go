package kernels

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ulikunitz/xz/lzma"
)

// decodeXZKernel decodes the xz stream of a kernel built with
// CONFIG_KERNEL_XZ: one block, filtered by the x86 BCJ filter and then
// LZMA2 (xz --x86 --lzma2). The xz package reads LZMA2 but not BCJ
// chains, so the container is read here, LZMA2 decoded by the package, and
// the BCJ filter undone after.
func decodeXZKernel(b []byte) ([]byte, error) {
	if len(b) < 12+8 || !bytes.HasPrefix(b, []byte("\xfd7zXZ\x00")) {
		return nil, errors.New("not an xz stream")
	}
	p := b[12:] // past the stream header
	hdrLen := (int(p[0]) + 1) * 4
	if p[0] == 0 || hdrLen > len(p) {
		return nil, errors.New("bad block header")
	}
	hdr := p[1 : hdrLen-4] // without the size byte and the CRC32
	flags := hdr[0]
	if flags&0x3c != 0 {
		return nil, errors.New("reserved block flags set")
	}
	nfilters := int(flags&3) + 1
	r := &varintReader{b: hdr[1:]}
	if flags&0x40 != 0 {
		r.next() // compressed size
	}
	if flags&0x80 != 0 {
		r.next() // uncompressed size
	}
	type filter struct {
		id    uint64
		props []byte
	}
	var filters []filter
	for range nfilters {
		id := r.next()
		n := r.next()
		if r.err != nil || n > uint64(len(r.b)) {
			return nil, errors.New("bad filter flags")
		}
		filters = append(filters, filter{id, r.b[:n]})
		r.b = r.b[n:]
	}
	if r.err != nil {
		return nil, r.err
	}
	const (
		filterX86   = 0x04
		filterLZMA2 = 0x21
	)
	last := filters[len(filters)-1]
	if last.id != filterLZMA2 || len(last.props) != 1 {
		return nil, fmt.Errorf("xz filter chain ends in filter %#x, want LZMA2", last.id)
	}
	var bcjStart uint32
	bcj := false
	switch {
	case len(filters) == 1:
	case len(filters) == 2 && filters[0].id == filterX86:
		bcj = true
		switch len(filters[0].props) {
		case 0:
		case 4:
			bcjStart = binary.LittleEndian.Uint32(filters[0].props)
		default:
			return nil, errors.New("bad BCJ filter properties")
		}
	default:
		return nil, fmt.Errorf("unsupported xz filter chain of %d filters", len(filters))
	}
	dictCap, err := lzma2DictCap(last.props[0])
	if err != nil {
		return nil, err
	}
	zr, err := lzma.Reader2Config{DictCap: dictCap}.NewReader2(bytes.NewReader(p[hdrLen:]))
	if err != nil {
		return nil, err
	}
	out, err := readLimited("lzma2", zr)
	if err != nil {
		return nil, err
	}
	if bcj {
		unBCJx86(out, bcjStart)
	}
	return out, nil
}

// lzma2DictCap decodes LZMA2's one-byte dictionary size property.
func lzma2DictCap(prop byte) (int, error) {
	if prop > 40 {
		return 0, fmt.Errorf("bad LZMA2 dictionary size %d", prop)
	}
	if prop == 40 {
		return lzma.MaxDictCap, nil
	}
	return (2 | int(prop&1)) << (prop/2 + 11), nil
}

// varintReader reads xz's multibyte integers.
type varintReader struct {
	b   []byte
	err error
}

func (r *varintReader) next() uint64 {
	var v uint64
	for i := 0; i < 9; i++ {
		if len(r.b) == 0 {
			r.err = errors.New("xz: truncated integer")
			return 0
		}
		c := r.b[0]
		r.b = r.b[1:]
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("xz: integer too long")
	return 0
}

// unBCJx86 undoes the x86 BCJ filter in place. The filter made the 32-bit
// operands of CALL (E8) and JMP (E9) absolute so they compress better;
// decoding turns them back into relative ones. It skips bytes that only
// look like an opcode, tracking the last three positions of E8/E9 bytes
// (prevMask) exactly as the encoder did, and leaves the last four bytes,
// which cannot hold a whole operand, as they are.
func unBCJx86(buf []byte, start uint32) {
	allowed := [8]bool{true, true, true, false, true, false, false, false}
	bitNum := [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
	msb := func(b byte) bool { return b == 0x00 || b == 0xff }
	if len(buf) <= 4 {
		return
	}
	limit := len(buf) - 4
	prevPos := -1
	prevMask := uint32(0)
	for i := 0; i < limit; i++ {
		if buf[i]&0xfe != 0xe8 {
			continue
		}
		d := i - prevPos
		if d > 3 {
			prevMask = 0
		} else {
			prevMask = (prevMask << (d - 1)) & 7
			if prevMask != 0 {
				b := buf[i+4-int(bitNum[prevMask])]
				if !allowed[prevMask] || msb(b) {
					prevPos = i
					prevMask = prevMask<<1 | 1
					continue
				}
			}
		}
		prevPos = i
		if !msb(buf[i+4]) {
			prevMask = prevMask<<1 | 1
			continue
		}
		src := binary.LittleEndian.Uint32(buf[i+1:])
		var dest uint32
		for {
			dest = src - (start + uint32(i) + 5)
			if prevMask == 0 {
				break
			}
			j := bitNum[prevMask] * 8
			if !msb(byte(dest >> (24 - j))) {
				break
			}
			src = dest ^ (1<<(32-j) - 1)
		}
		dest &= 0x01ffffff
		dest |= -(dest & 0x01000000)
		binary.LittleEndian.PutUint32(buf[i+1:], dest)
		i += 4
	}
}
