package vm

import (
	"fmt"
	"io"
	"strings"
)

// Mode bits of a cpio newc entry (the same as st_mode).
const (
	cpioModeDir  = 0o040000
	cpioModeFile = 0o100000
	cpioModeChar = 0o020000
)

// CPIOWriter writes a cpio archive in the "newc" format (magic 070701), the
// one the kernel unpacks as an initramfs. Entries are written in order; a
// directory must be written before what it holds.
type CPIOWriter struct {
	w      io.Writer
	off    int64
	ino    uint32
	closed bool
	err    error
}

// NewCPIOWriter returns a writer of a newc archive to w.
func NewCPIOWriter(w io.Writer) *CPIOWriter { return &CPIOWriter{w: w, ino: 1} }

// Dir adds a directory.
func (c *CPIOWriter) Dir(name string, perm uint32) error {
	return c.entry(name, cpioModeDir|perm&0o7777, 0, 0, nil)
}

// File adds a regular file with the given content.
func (c *CPIOWriter) File(name string, perm uint32, data []byte) error {
	return c.entry(name, cpioModeFile|perm&0o7777, 0, 0, data)
}

// CharDev adds a character device node.
func (c *CPIOWriter) CharDev(name string, perm uint32, major, minor uint32) error {
	return c.entry(name, cpioModeChar|perm&0o7777, major, minor, nil)
}

// Close writes the trailer. It does not close the underlying writer.
func (c *CPIOWriter) Close() error {
	if c.closed {
		return c.err
	}
	err := c.entry("TRAILER!!!", 0, 0, 0, nil)
	c.closed = true
	return err
}

func (c *CPIOWriter) entry(name string, mode, rmajor, rminor uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return fmt.Errorf("cpio: write after close")
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("cpio: bad entry name %q", name)
	}
	if int64(len(data)) > 0xffffffff {
		return fmt.Errorf("cpio: %s: file too large for newc (%d bytes)", name, len(data))
	}
	ino := uint32(0)
	nlink := uint32(1)
	if name != "TRAILER!!!" {
		ino = c.ino
		c.ino++
		if mode&0o170000 == cpioModeDir {
			nlink = 2
		}
	}
	// 13 fields of 8 hex digits after the magic; mtime 0 keeps archives
	// reproducible.
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write([]byte(name))
	c.write([]byte{0})
	c.pad()
	c.write(data)
	c.pad()
	return c.err
}

func (c *CPIOWriter) write(b []byte) {
	if c.err != nil || len(b) == 0 {
		return
	}
	n, err := c.w.Write(b)
	c.off += int64(n)
	if err != nil {
		c.err = fmt.Errorf("cpio: %w", err)
	}
}

// pad aligns the stream to 4 bytes, as newc requires after the name and
// after the data.
func (c *CPIOWriter) pad() {
	if r := c.off % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
