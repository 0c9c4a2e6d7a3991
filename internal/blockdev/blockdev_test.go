//go:build linux

package blockdev

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// FindSerial finds each disk of this machine that has a serial by it,
// and nothing for a serial no disk has.
func TestFindSerial(t *testing.T) {
	paths, _ := filepath.Glob("/sys/block/*/serial")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		serial := strings.TrimSpace(string(b))
		if err != nil || serial == "" {
			continue
		}
		want := filepath.Base(filepath.Dir(p))
		if got, ok := FindSerial(serial); !ok || got != want {
			// Two disks may share a serial; the one found must have it.
			if b, _ := os.ReadFile(filepath.Join("/sys/block", got, "serial")); strings.TrimSpace(string(b)) != serial {
				t.Errorf("FindSerial(%q) = %q, %v; want %s", serial, got, ok, want)
			}
		}
	}
	if name, ok := FindSerial("tailgate-no-such-serial"); ok {
		t.Errorf("FindSerial of a serial no disk has = %q", name)
	}
	d, found, err := BySerial("tailgate-no-such-serial")
	if d != nil || found || err != nil {
		t.Errorf("BySerial of a serial no disk has = %v, %v, %v; want nothing and no error", d, found, err)
	}
}

func TestBoundNotALoop(t *testing.T) {
	for _, name := range []string{"tailgate-no-such-device", "../../etc"} {
		if b := Bound(name); b != "" {
			t.Errorf("Bound(%q) = %q", name, b)
		}
	}
}

func TestLoopBadSize(t *testing.T) {
	for _, size := range []int64{0, -4096, 1000, 4097} {
		if d, err := Loop(t.TempDir(), size); err == nil || !strings.Contains(err.Error(), "not a positive multiple of 4096") {
			if d != nil {
				d.Close()
			}
			t.Errorf("Loop of %d bytes: %v", size, err)
		}
	}
}

// A loop device is the size asked, over a file in dir that has no name,
// reads back what was written with O_DIRECT, and is gone with its file
// after Close.
func TestLoop(t *testing.T) {
	testenv.Need(t, testenv.LoopDevices)
	dir := t.TempDir()
	const size = 1 << 20
	d, err := Loop(dir, size)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			d.Close()
		}
	}()
	if d.Kind != KindLoop || !strings.HasPrefix(d.Name, "loop") || d.Size != size {
		t.Errorf("device %s kind %s size %d; want a loop device of %d bytes", d.Name, d.Kind, d.Size, size)
	}
	if d.BlockSize < 512 || d.BlockSize&(d.BlockSize-1) != 0 {
		t.Errorf("block size %d", d.BlockSize)
	}
	// sysfs says the same, in 512-byte sectors.
	if b, err := os.ReadFile(filepath.Join("/sys/block", d.Name, "size")); err != nil {
		t.Error(err)
	} else if n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); n*512 != size {
		t.Errorf("/sys/block/%s/size is %d sectors, want %d", d.Name, n, size/512)
	}
	backing := Bound(d.Name)
	if !strings.HasPrefix(backing, dir+"/") || !strings.HasSuffix(backing, "(deleted)") {
		t.Errorf("backing file %q; want a file in %s with no name", backing, dir)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("%d entries in %s while the device is set up; want none", len(es), dir)
	}

	// O_DIRECT wants an aligned buffer.
	raw := make([]byte, 2*4096)
	off := int((4096 - uintptr(unsafe.Pointer(&raw[0]))%4096) % 4096)
	buf := raw[off : off+4096]
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	if _, err := d.File.WriteAt(buf, 8192); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fdatasync(int(d.File.Fd())); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2*4096)
	goff := int((4096 - uintptr(unsafe.Pointer(&got[0]))%4096) % 4096)
	rb := got[goff : goff+4096]
	if _, err := d.File.ReadAt(rb, 8192); err != nil {
		t.Fatal(err)
	}
	for i := range rb {
		if rb[i] != byte(i*7) {
			t.Fatalf("byte %d read back %d, wrote %d", i, rb[i], byte(i*7))
		}
	}

	closed = true
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if b := Bound(d.Name); b == backing {
		t.Errorf("%s still bound to %s after Close", d.Name, b)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
