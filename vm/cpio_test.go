package vm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/testenv"
	"github.com/tailgate-ci/tailgate/kernels"
)

// cpioEntry is an entry read back from a newc archive.
type cpioEntry struct {
	Name         string
	Mode         uint32
	Major, Minor uint32
	Data         string
}

// readCPIO parses a newc archive strictly, for tests.
func readCPIO(b []byte) ([]cpioEntry, error) {
	var out []cpioEntry
	off := 0
	align := func() { off = (off + 3) &^ 3 }
	for {
		if off+110 > len(b) {
			return nil, fmt.Errorf("truncated header at %d", off)
		}
		h := b[off : off+110]
		if string(h[:6]) != "070701" {
			return nil, fmt.Errorf("bad magic %q at %d", h[:6], off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(h[6+8*i:14+8*i]), 16, 32)
			if err != nil {
				panic(err)
			}
			return uint32(v)
		}
		mode, size, rmaj, rmin, namesize := field(1), field(6), field(9), field(10), field(11)
		off += 110
		if namesize == 0 || off+int(namesize) > len(b) || b[off+int(namesize)-1] != 0 {
			return nil, fmt.Errorf("bad name at %d", off)
		}
		name := string(b[off : off+int(namesize)-1])
		off += int(namesize)
		align()
		if off+int(size) > len(b) {
			return nil, fmt.Errorf("%s: truncated data", name)
		}
		data := string(b[off : off+int(size)])
		off += int(size)
		align()
		if name == "TRAILER!!!" {
			if off != len(b) {
				return nil, fmt.Errorf("%d bytes after the trailer", len(b)-off)
			}
			return out, nil
		}
		out = append(out, cpioEntry{name, mode, rmaj, rmin, data})
	}
}

func writeTestArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewCPIOWriter(&buf)
	steps := []error{
		w.Dir("dev", 0o755),
		w.CharDev("/dev/console", 0o600, 5, 1),
		w.File("init", 0o755, []byte("#!binary")),
		w.Dir("tailgate", 0o755),
		w.File("tailgate/request.json", 0o644, []byte(`{"a":1}`)),
		w.File("tailgate/empty", 0o644, nil),
		w.File("tailgate/odd-length-name-x", 0o644, bytes.Repeat([]byte{0xab}, 4099)),
		w.Close(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if buf.Len()%4 != 0 {
		t.Fatalf("archive length %d is not 4-aligned", buf.Len())
	}
	return buf.Bytes()
}

func TestCPIORoundTrip(t *testing.T) {
	got, err := readCPIO(writeTestArchive(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []cpioEntry{
		{"dev", 0o040755, 0, 0, ""},
		{"dev/console", 0o020600, 5, 1, ""},
		{"init", 0o100755, 0, 0, "#!binary"},
		{"tailgate", 0o040755, 0, 0, ""},
		{"tailgate/request.json", 0o100644, 0, 0, `{"a":1}`},
		{"tailgate/empty", 0o100644, 0, 0, ""},
		{"tailgate/odd-length-name-x", 0o100644, 0, 0, strings.Repeat("\xab", 4099)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("archive (-want +got):\n%s", d)
	}
}

// TestCPIOSystemReader checks the archive with GNU cpio, which is what
// the kernel's format was defined by.
func TestCPIOSystemReader(t *testing.T) {
	testenv.Need(t, testenv.Tool("cpio", "scripts/install-deps.sh installs it"))
	cmd := exec.Command("cpio", "-itv", "--quiet")
	cmd.Stdin = bytes.NewReader(writeTestArchive(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -it: %v\n%s", err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		got = append(got, f[0]+" "+f[len(f)-1])
	}
	want := []string{
		"drwxr-xr-x dev",
		"crw------- dev/console",
		"-rwxr-xr-x init",
		"drwxr-xr-x tailgate",
		"-rw-r--r-- tailgate/request.json",
		"-rw-r--r-- tailgate/empty",
		"-rw-r--r-- tailgate/odd-length-name-x",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cpio -itv (-want +got):\n%s", d)
	}
}

func TestCPIOBadNames(t *testing.T) {
	for _, name := range []string{"", "/", "a\x00b"} {
		w := NewCPIOWriter(&bytes.Buffer{})
		if err := w.File(name, 0o644, nil); err == nil {
			t.Errorf("File(%q) succeeded", name)
		}
	}
	w := NewCPIOWriter(&bytes.Buffer{})
	w.Close()
	if err := w.Dir("x", 0o755); err == nil {
		t.Error("write after Close succeeded")
	}
}

func TestWriteInitramfs(t *testing.T) {
	init := buildStaticBinary(t)
	mod := t.TempDir() + "/virtio.ko"
	os.WriteFile(mod, []byte("module"), 0o644)
	var buf bytes.Buffer
	config := t.TempDir() + "/config"
	os.WriteFile(config, []byte("CONFIG_BPF=y\n"), 0o644)
	k := &kernels.Kernel{Release: "6.1.0-99-test-amd64", Config: config, Modules: []string{mod}}
	if err := writeInitramfs(&buf, init, k, "", GuestRequest{Trials: 3}); err != nil {
		t.Fatal(err)
	}
	ents, err := readCPIO(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]cpioEntry{}
	for _, e := range ents {
		files[e.Name] = e
	}
	if e := files["dev/console"]; e.Mode != 0o020600 || e.Major != 5 || e.Minor != 1 {
		t.Errorf("dev/console = %+v", e)
	}
	if e := files["init"]; e.Mode != 0o100755 || !strings.HasPrefix(e.Data, "\x7fELF") {
		t.Errorf("init: mode %o, %d bytes", e.Mode, len(e.Data))
	}
	if e := files["boot/config-6.1.0-99-test-amd64"]; e.Data != "CONFIG_BPF=y\n" {
		t.Errorf("config = %q", e.Data)
	}
	if e := files["tailgate/modules/virtio.ko"]; e.Data != "module" {
		t.Errorf("module = %q", e.Data)
	}
	want := `{"scenarios":null,"trials":3,"target":{"name":"","kind":""},"modules":["/tailgate/modules/virtio.ko"]}`
	if got := files["tailgate/request.json"].Data; got != want {
		t.Errorf("request.json = %s\nwant %s", got, want)
	}
}
