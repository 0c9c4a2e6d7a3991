package kernels

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

func TestParseABI(t *testing.T) {
	for _, tc := range []struct {
		abi     string
		ok      bool
		version []int
		line    string
		flavour string
	}{
		{"6.1.0-57-cloud-amd64", true, []int{6, 1, 0, 57}, "6.1", "cloud"},
		{"6.1.0-57-rt-amd64", true, []int{6, 1, 0, 57}, "6.1", "rt"},
		{"6.1.0-57-amd64", true, []int{6, 1, 0, 57}, "6.1", "generic"},
		{"6.12.117+deb12-cloud-amd64", true, []int{6, 12, 117}, "6.12", "cloud"},
		{"6.12.117+deb12-amd64", true, []int{6, 12, 117}, "6.12", "generic"},
		{"latest-cloud", false, nil, "", ""},
		{"6.1.0-57-cloud-arm64", false, nil, "", ""},
		{"../../etc-amd64", false, nil, "", ""},
		{"6.1.0-57-cloud-amd64 x", false, nil, "", ""},
	} {
		a, ok := parseABI(tc.abi)
		if ok != tc.ok || !cmp.Equal(a.version, tc.version) || a.line != tc.line || a.flavour != tc.flavour {
			t.Errorf("parseABI(%q) = %+v, %v", tc.abi, a, ok)
		}
	}
}

func TestNewest(t *testing.T) {
	abis := []string{
		"6.1.0-9-cloud-amd64", "6.1.0-57-cloud-amd64", "6.1.0-56-cloud-amd64",
		"6.1.0-57-rt-amd64", "6.1.0-57-amd64",
		"6.12.9+deb12-cloud-amd64", "6.12.117+deb12-cloud-amd64", "6.12.115+deb12-cloud-amd64",
	}
	for _, tc := range []struct{ alias, want string }{
		{"latest-cloud", "6.12.117+deb12-cloud-amd64"},
		{"6.1-cloud", "6.1.0-57-cloud-amd64"},
		{"6.12-cloud", "6.12.117+deb12-cloud-amd64"},
		{"latest-rt", "6.1.0-57-rt-amd64"},
		{"latest-generic", "6.1.0-57-amd64"},
		{"6.12-rt", ""},
	} {
		q, ok := parseAlias(tc.alias)
		if !ok {
			t.Fatalf("parseAlias(%q) failed", tc.alias)
		}
		if got := newest(abis, q); got != tc.want {
			t.Errorf("newest(%s) = %q, want %q", tc.alias, got, tc.want)
		}
	}
	sortABIs(abis)
	if abis[0] != "6.1.0-9-cloud-amd64" || abis[len(abis)-1] != "6.12.117+deb12-cloud-amd64" {
		t.Errorf("sorted: %v", abis)
	}
}

func TestResolveBadSpecs(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	for _, tc := range []struct{ spec, want string }{
		{"/no/such/bzImage", `kernel "/no/such/bzImage": no such file`},
		{"debian:6.1-foo", `kernel "debian:6.1-foo": "6.1-foo" is not a Debian kernel ABI`},
		{"debian:", "is not a Debian kernel ABI"},
	} {
		_, err := c.Resolve(context.Background(), tc.spec)
		if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "tailgate kernels list") {
			t.Errorf("Resolve(%q) = %v, want ErrUnknown with %q and the list hint", tc.spec, err, tc.want)
		}
	}
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("not a kernel"), 0o644)
	if _, err := c.Resolve(context.Background(), junk); err == nil || !strings.Contains(err.Error(), "neither a bzImage nor an ELF") {
		t.Errorf("Resolve(junk) = %v", err)
	}
}

// fakeBzImage wraps payload in the parts of a bzImage setup header that
// extraction reads.
func fakeBzImage(payload []byte) []byte {
	const setupSects = 1
	start := (setupSects + 1) * 512
	b := make([]byte, start+16+len(payload))
	b[0x1f1] = setupSects
	copy(b[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(b[0x206:], 0x20f)
	binary.LittleEndian.PutUint16(b[0x20e:], 0x100) // version string at 0x300
	copy(b[0x300:], "6.1.0-99-test-amd64 (someone@example) #1 SMP\x00")
	binary.LittleEndian.PutUint32(b[0x248:], 16)
	binary.LittleEndian.PutUint32(b[0x24c:], uint32(len(payload)))
	copy(b[start+16:], payload)
	return b
}

// testELF returns a minimal x86-64 ELF with one PT_NOTE segment holding
// the Xen PVH entry note (or another note), padded to at least size bytes.
func testELF(pvh bool, size int) []byte {
	le := binary.LittleEndian
	b := make([]byte, 64+56)
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 2)  // ET_EXEC
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)  // version
	le.PutUint64(b[32:], 64) // phoff
	le.PutUint16(b[52:], 64) // ehsize
	le.PutUint16(b[54:], 56) // phentsize
	le.PutUint16(b[56:], 1)  // phnum
	le.PutUint16(b[58:], 64) // shentsize
	typ := uint32(18)        // XEN_ELFNOTE_PHYS32_ENTRY
	if !pvh {
		typ = 1
	}
	note := le.AppendUint32(nil, 4)
	note = le.AppendUint32(note, 4)
	note = le.AppendUint32(note, typ)
	note = append(note, "Xen\x00"...)
	note = le.AppendUint32(note, 0x1000000)
	ph := b[64:]
	le.PutUint32(ph[0:], uint32(elf.PT_NOTE))
	le.PutUint64(ph[8:], uint64(len(b)))     // offset
	le.PutUint64(ph[32:], uint64(len(note))) // filesz
	le.PutUint64(ph[40:], uint64(len(note))) // memsz
	b = append(b, note...)
	for len(b) < size {
		b = append(b, "kernel text "...)
	}
	return b
}

func sizeAppended(b []byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(b, uint32(n))
}

func TestExtractVmlinux(t *testing.T) {
	elf := testELF(true, 60000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(elf)
	zw.Close()
	var xzb bytes.Buffer
	xw, _ := xz.NewWriter(&xzb)
	xw.Write(elf)
	xw.Close()
	enc, _ := zstd.NewWriter(nil)
	zst := enc.EncodeAll(elf, nil)

	for _, tc := range []struct {
		name    string
		payload []byte
	}{
		{"gzip", gz.Bytes()},
		{"xz", sizeAppended(xzb.Bytes(), len(elf))},
		{"zstd", sizeAppended(zst, len(elf))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bz := fakeBzImage(tc.payload)
			got, err := extractVmlinux(bz)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, elf) {
				t.Errorf("extracted %d bytes, want %d", len(got), len(elf))
			}
			if r := bzRelease(bz); r != "6.1.0-99-test-amd64" {
				t.Errorf("release %q", r)
			}
		})
	}
	t.Run("wrong size", func(t *testing.T) {
		if _, err := extractVmlinux(fakeBzImage(sizeAppended(zst, len(elf)+1))); err == nil {
			t.Error("a wrong appended size was accepted")
		}
	})
	t.Run("no PVH note", func(t *testing.T) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(testELF(false, 100))
		zw.Close()
		if _, err := extractVmlinux(fakeBzImage(gz.Bytes())); err == nil || !strings.Contains(err.Error(), "PVH") {
			t.Errorf("err = %v, want no PVH note", err)
		}
	})
	t.Run("not bzImage", func(t *testing.T) {
		if _, err := extractVmlinux(elf); err == nil {
			t.Error("accepted a non-bzImage")
		}
	})
	t.Run("payload outside", func(t *testing.T) {
		bz := fakeBzImage(gz.Bytes())
		binary.LittleEndian.PutUint32(bz[0x24c:], 1<<30)
		if _, err := extractVmlinux(bz); err == nil {
			t.Error("accepted a payload past the end")
		}
	})
}

func TestLZ4Legacy(t *testing.T) {
	// Sequence 1: 3 literals "abc", then a 9-byte match at offset 3
	// (overlapping). Sequence 2, the last: 20 literals (15 + extension
	// byte 5) and no match.
	block := []byte{0x35, 'a', 'b', 'c', 3, 0, 0xf0, 5}
	block = append(block, "0123456789ABCDEFGHIJ"...)
	want := "abc" + "abcabcabc" + "0123456789ABCDEFGHIJ"
	stream := []byte{0x02, 0x21, 0x4c, 0x18}
	stream = binary.LittleEndian.AppendUint32(stream, uint32(len(block)))
	stream = append(stream, block...)
	got, err := decompressKernel(sizeAppended(stream, len(want)))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range [][]byte{
		{0x10},             // literal past the end
		{0x00, 'a', 9, 0},  // match before the start
		{0x00, 0, 0},       // offset zero
		{0x10, 'a', 1},     // cut offset
		{0xf0, 0xff, 0xff}, // cut length
	} {
		if _, err := lz4Block(nil, bad); err == nil {
			t.Errorf("lz4Block(% x) succeeded", bad)
		}
	}
}

// A System.map in the kernel's build tree is used when its linux_banner
// is where the booted ELF has the banner; another build's, or Debian's
// placeholder, is not.
func TestTreeSystemMap(t *testing.T) {
	k := testKernel(t)
	f, err := elf.Open(k.Vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	var banner uint64
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || banner != 0 {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, []byte("Linux version 6.")); i >= 0 {
			banner = p.Vaddr + uint64(i)
		}
	}
	f.Close()
	if banner == 0 {
		t.Fatal("no banner in the kernel")
	}
	tree := t.TempDir()
	image := filepath.Join(tree, "arch", "x86", "boot", "bzImage")
	if err := os.MkdirAll(filepath.Dir(image), 0o755); err != nil {
		t.Fatal(err)
	}
	sysmap := filepath.Join(tree, "System.map")
	write := func(text string) {
		if err := os.WriteFile(sysmap, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("ffffffff81000000 T _stext\n%016x D linux_banner\nffffffff82000000 T _etext\n", banner))
	if got := treeSystemMap(image, k.Vmlinux); got != sysmap {
		t.Errorf("treeSystemMap = %q, want the tree's %q", got, sysmap)
	}
	write(fmt.Sprintf("%016x D linux_banner\n", banner+8))
	if got := treeSystemMap(image, k.Vmlinux); got != "" {
		t.Errorf("another build's map (banner 8 bytes off) was taken: %q", got)
	}
	write("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n")
	if got := treeSystemMap(image, k.Vmlinux); got != "" {
		t.Errorf("Debian's placeholder was taken: %q", got)
	}
}

var (
	debianKernelOnce sync.Once
	debianKernel     *Kernel
	debianKernelErr  error
)

// testKernel fetches the newest Debian 6.1 cloud kernel, once. Without
// apt-get, dpkg-deb or Debian's kernel packages it skips (testenv; under
// TAILGATE_CI_STRICT missing tools fail).
func testKernel(t *testing.T) *Kernel {
	t.Helper()
	if testing.Short() {
		t.Skip("fetches a Debian kernel; skipped with -short")
	}
	testenv.Need(t, testenv.Tool("apt-get", "Debian's apt fetches the kernels"))
	testenv.Need(t, testenv.Tool("dpkg-deb", "Debian: dpkg"))
	testenv.Need(t, testenv.DebianKernels)
	debianKernelOnce.Do(func() {
		c, err := DefaultCache()
		if err != nil {
			debianKernelErr = err
			return
		}
		c.Progress = func(s string) { t.Log(s) }
		debianKernel, debianKernelErr = c.Resolve(context.Background(), "debian:6.1-cloud")
	})
	if debianKernelErr != nil {
		t.Fatal(debianKernelErr)
	}
	return debianKernel
}
