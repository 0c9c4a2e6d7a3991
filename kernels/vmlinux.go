package kernels

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// maxVmlinux bounds what a decompressor may produce, so that a corrupt
// image cannot exhaust memory.
const maxVmlinux = 1 << 30

// extractVmlinux returns the uncompressed ELF kernel inside a bzImage.
// QEMU boots that ELF through PVH, which skips the guest's own
// decompression (seconds under TCG for an XZ kernel).
func extractVmlinux(bz []byte) ([]byte, error) {
	payload, err := bzPayload(bz)
	if err != nil {
		return nil, err
	}
	elf, err := decompressKernel(payload)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(elf, []byte("\x7fELF")) {
		return nil, errors.New("payload does not decompress to an ELF")
	}
	if err := checkPVH(elf); err != nil {
		return nil, err
	}
	return elf, nil
}

// checkPVH checks that an ELF kernel has the PVH entry point QEMU needs
// to boot it (the Xen PHYS32_ENTRY note, from CONFIG_PVH).
func checkPVH(b []byte) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("kernel ELF: %w", err)
	}
	defer f.Close()
	const xenElfnotePhys32Entry = 18
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(io.LimitReader(p.Open(), 1<<20))
		if err != nil {
			continue
		}
		for len(notes) >= 12 {
			namesz := binary.LittleEndian.Uint32(notes[0:])
			descsz := binary.LittleEndian.Uint32(notes[4:])
			typ := binary.LittleEndian.Uint32(notes[8:])
			nameEnd := 12 + (uint64(namesz)+3)&^3
			end := nameEnd + (uint64(descsz)+3)&^3
			if end > uint64(len(notes)) {
				break
			}
			name := notes[12 : 12+namesz]
			if typ == xenElfnotePhys32Entry && string(bytes.TrimRight(name, "\x00")) == "Xen" {
				return nil
			}
			notes = notes[end:]
		}
	}
	return errors.New("kernel ELF has no PVH entry note (built without CONFIG_PVH)")
}

// bzPayload returns the compressed kernel of a bzImage, found through the
// setup header (boot protocol 2.08 and later: payload_offset and
// payload_length, relative to the protected-mode code).
func bzPayload(bz []byte) ([]byte, error) {
	if len(bz) < 0x250 || string(bz[0x202:0x206]) != "HdrS" {
		return nil, errors.New("not a bzImage: no HdrS setup header")
	}
	if v := binary.LittleEndian.Uint16(bz[0x206:]); v < 0x208 {
		return nil, fmt.Errorf("boot protocol %#x has no payload fields", v)
	}
	setupSects := int(bz[0x1f1])
	if setupSects == 0 {
		setupSects = 4
	}
	start := (setupSects + 1) * 512
	off := int(binary.LittleEndian.Uint32(bz[0x248:]))
	n := int(binary.LittleEndian.Uint32(bz[0x24c:]))
	if off < 0 || n <= 0 || start+off+n > len(bz) || start+off+n < start {
		return nil, fmt.Errorf("payload %d+%d lies outside the %d-byte image", off, n, len(bz))
	}
	return bz[start+off : start+off+n], nil
}

// bzRelease returns the release (what uname -r prints) recorded in a
// bzImage's kernel_version string, or "".
func bzRelease(bz []byte) string {
	if len(bz) < 0x210 || string(bz[0x202:0x206]) != "HdrS" {
		return ""
	}
	p := int(binary.LittleEndian.Uint16(bz[0x20e:])) + 0x200
	if p <= 0x200 || p >= len(bz) {
		return ""
	}
	s := bz[p:min(len(bz), p+256)]
	if i := bytes.IndexAny(s, " \x00"); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

// decompressKernel decompresses a kernel payload in any of the formats the
// kernel build offers, except LZMA and LZO. All but gzip end with the
// uncompressed size (4 bytes, little endian), which is checked.
func decompressKernel(p []byte) ([]byte, error) {
	sized := func(name string, dec func([]byte) ([]byte, error)) ([]byte, error) {
		if len(p) < 8 {
			return nil, fmt.Errorf("%s payload too short", name)
		}
		body, want := p[:len(p)-4], binary.LittleEndian.Uint32(p[len(p)-4:])
		out, err := dec(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if uint32(len(out)) != want {
			return nil, fmt.Errorf("%s: got %d bytes, the image says %d", name, len(out), want)
		}
		return out, nil
	}
	switch {
	case bytes.HasPrefix(p, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		zr.Multistream(false)
		return readLimited("gzip", zr)
	case bytes.HasPrefix(p, []byte("\xfd7zXZ\x00")):
		return sized("xz", decodeXZKernel)
	case bytes.HasPrefix(p, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return sized("zstd", func(b []byte) ([]byte, error) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxVmlinux), zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.DecodeAll(b, nil)
		})
	case bytes.HasPrefix(p, []byte{0x02, 0x21, 0x4c, 0x18}):
		return sized("lz4", lz4Legacy)
	case bytes.HasPrefix(p, []byte("BZh")):
		return sized("bzip2", func(b []byte) ([]byte, error) {
			return readLimited("bzip2", bzip2.NewReader(bytes.NewReader(b)))
		})
	}
	return nil, fmt.Errorf("unknown kernel compression (payload starts % x)", p[:min(len(p), 6)])
}

func readLimited(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxVmlinux+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxVmlinux {
		return nil, fmt.Errorf("%s: more than %d bytes", name, maxVmlinux)
	}
	return b, nil
}

// lz4Legacy decodes the LZ4 "legacy" format the kernel build uses
// (lz4 -l): a magic number, then blocks, each a 4-byte little-endian
// compressed length and an LZ4 block of at most 8 MiB uncompressed.
func lz4Legacy(p []byte) ([]byte, error) {
	const magic = 0x184c2102
	var out []byte
	for len(p) > 0 {
		if len(p) < 4 {
			return nil, errors.New("truncated block header")
		}
		n := binary.LittleEndian.Uint32(p)
		p = p[4:]
		if n == magic { // concatenated archives
			continue
		}
		if uint64(n) > uint64(len(p)) {
			return nil, fmt.Errorf("block of %d bytes, %d left", n, len(p))
		}
		var err error
		out, err = lz4Block(out, p[:n])
		if err != nil {
			return nil, err
		}
		if len(out) > maxVmlinux {
			return nil, fmt.Errorf("more than %d bytes", maxVmlinux)
		}
		p = p[n:]
	}
	return out, nil
}

// lz4Block appends the decoding of one LZ4 block to dst. Matches may refer
// only to bytes of the same block, which the legacy format guarantees.
func lz4Block(dst, src []byte) ([]byte, error) {
	base := len(dst)
	errCorrupt := errors.New("corrupt lz4 block")
	length := func(i int, n int) (int, int, error) {
		if n != 15 {
			return i, n, nil
		}
		for {
			if i >= len(src) {
				return 0, 0, errCorrupt
			}
			b := src[i]
			i++
			n += int(b)
			if b != 255 {
				return i, n, nil
			}
		}
	}
	i := 0
	for i < len(src) {
		tok := src[i]
		i++
		var lit int
		var err error
		i, lit, err = length(i, int(tok>>4))
		if err != nil {
			return nil, err
		}
		if lit > len(src)-i {
			return nil, errCorrupt
		}
		dst = append(dst, src[i:i+lit]...)
		i += lit
		if i == len(src) { // the last sequence has literals only
			break
		}
		if i+2 > len(src) {
			return nil, errCorrupt
		}
		off := int(src[i]) | int(src[i+1])<<8
		i += 2
		var ml int
		i, ml, err = length(i, int(tok&15))
		if err != nil {
			return nil, err
		}
		ml += 4
		if off == 0 || off > len(dst)-base {
			return nil, errCorrupt
		}
		from := len(dst) - off
		for k := 0; k < ml; k++ { // byte by byte: matches may overlap
			dst = append(dst, dst[from+k])
		}
	}
	return dst, nil
}
