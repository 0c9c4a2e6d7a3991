package symbols

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

func TestParseKallsyms(t *testing.T) {
	text := "ffffffff81000000 T _stext\n" +
		"ffffffff81000100 D some_data\n" +
		"ffffffff81000200 t local_fn\n" +
		"0000000000000000 T hidden\n" +
		"garbage line\n" +
		"ffffffffc0002000 t mod_fn\t[virtio]\n" +
		"ffffffffc0001000 T mod_first\t[virtio]\n" +
		"ffffffff81000300 W weak_fn"
	path := filepath.Join(t.TempDir(), "kallsyms")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewSymbolizer()
	s.kallsym = path
	for addr, want := range map[uint64]string{
		0xffffffff81000000: "_stext+0x0",
		0xffffffff81000150: "_stext+0x150", // data symbols are not functions
		0xffffffff81000210: "local_fn+0x10",
		0xffffffff81000301: "weak_fn+0x1", // last line, no newline
		0xffffffffc0001004: "mod_first+0x4",
		0xffffffffc0002008: "mod_fn+0x8", // the module's name is not part of it
		0xffffffff80000000: "0xffffffff80000000",
	} {
		if got := s.Kernel(addr); got != want {
			t.Errorf("Kernel(%#x) = %q, want %q", addr, got, want)
		}
	}
	if s.kerr != nil {
		t.Fatal(s.kerr)
	}
}

// TestKernelNamesEveryFunction checks the parse against this kernel's own
// kallsyms: every text symbol's address names a symbol at that address.
func TestKernelNamesEveryFunction(t *testing.T) {
	testenv.Need(t, testenv.Root) // kallsyms shows addresses to root alone
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := map[uint64]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// Only the kernel's own: BPF programs and modules come and go
		// (other tests load programs) between this read and the
		// symbolizer's.
		if len(fs) != 3 || !strings.ContainsAny(fs[1], "tTwW") {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		if at[a] == nil {
			at[a] = map[string]bool{}
		}
		at[a][fs[2]] = true
	}
	if len(at) < 1000 {
		t.Fatalf("only %d text symbols in /proc/kallsyms", len(at))
	}
	s := NewSymbolizer()
	n := 0
	for a, names := range at {
		got := s.Kernel(a)
		name, ok := strings.CutSuffix(got, "+0x0")
		if !ok || !names[name] {
			t.Errorf("Kernel(%#x) = %q, want one of %v+0x0", a, got, names)
			if n++; n > 10 {
				t.FailNow()
			}
		}
	}
}

func TestGuestLeavesCoreFramesForTheHost(t *testing.T) {
	dir := t.TempDir()
	sysmap := "ffffffff81000000 T _stext\n" +
		"ffffffff81000100 T bpf_trace_run2\n" +
		"ffffffff81000200 t pipe_read\n" +
		"ffffffff81000300 T vfs_read\n" +
		"ffffffff81100000 T _etext\n"
	kallsyms := sysmap + "ffffffffc0001000 t virtblk_request_done\t[virtio_blk]\n"
	mapPath, kallPath := filepath.Join(dir, "System.map"), filepath.Join(dir, "kallsyms")
	for p, text := range map[string]string{mapPath: sysmap, kallPath: kallsyms} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ReadSystemMap(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Text(); got != (TextRange{0xffffffff81000000, 0xffffffff81100000}) {
		t.Fatalf("text %#x-%#x, want _stext to _etext", got.Start, got.End)
	}

	// The guest: a BPF program's frame first, then the glue, the kernel's
	// own frames and a module's.
	guest := NewSymbolizer()
	guest.kallsym = filepath.Join(dir, "absent") // core frames must not need it
	guest.LeaveCore(m.Text())
	stack := []uint64{0xffffffffa0002000, 0xffffffff81000104, 0xffffffff81000210, 0xffffffff81000320}
	got := guest.KernelStack(stack)
	want := []string{"0xffffffff81000104", "0xffffffff81000210", "0xffffffff81000320"}
	if !slices.Equal(got, want) {
		t.Fatalf("guest frames %q, want %q (the program's frame dropped, the rest as hex)", got, want)
	}
	if guest.kernel != nil || guest.kerr != nil {
		t.Error("the guest read kallsyms for frames the host names")
	}
	guest.kallsym = kallPath
	if got := guest.KernelStack([]uint64{0xffffffff81000210, 0xffffffffc0001010}); got[1] != "virtblk_request_done+0x10" {
		t.Errorf("a module's frame below the core: %q, want it named in the guest", got)
	}

	// The host.
	for i, f := range got {
		got[i] = m.Name(f)
	}
	named := make([]string, len(want))
	for i, f := range want {
		named[i] = m.Name(f)
	}
	if want := []string{"pipe_read+0x10", "vfs_read+0x20"}; !slices.Equal(TrimTracing(named), want) {
		t.Errorf("host names %q, trimmed %q, want %q", named, TrimTracing(named), want)
	}
	for _, f := range []string{"pipe_read+0x10", "0xffffffffc0001010", "0xzz"} {
		if got := m.Name(f); got != f {
			t.Errorf("Name(%q) = %q, want it unchanged", f, got)
		}
	}
}

// A worker on the host leaves the modules' frames as hex too, and reads
// no kallsyms; the host's kallsyms, which lists the modules, names them.
// A System.map, which does not, leaves them alone.
func TestHostNamesModuleFrames(t *testing.T) {
	dir := t.TempDir()
	sysmap := "ffffffff81000000 T _stext\n" +
		"ffffffff81000300 T vfs_read\n" +
		"ffffffff81100000 T _etext\n"
	kallsyms := sysmap + "ffffffffc0001000 t virtblk_request_done\t[virtio_blk]\n"
	mapPath, kallPath := filepath.Join(dir, "System.map"), filepath.Join(dir, "kallsyms")
	for p, text := range map[string]string{mapPath: sysmap, kallPath: kallsyms} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host, err := ReadSystemMap(kallPath)
	if err != nil {
		t.Fatal(err)
	}
	if !host.Modules() {
		t.Fatal("kallsyms with a module's symbol: Modules() false")
	}

	worker := NewSymbolizer()
	worker.kallsym = filepath.Join(dir, "absent")
	worker.LeaveCore(host.Text())
	worker.LeaveModules()
	got := worker.KernelStack([]uint64{0xffffffffa0002000, 0xffffffff81000320, 0xffffffffc0001010})
	if want := []string{"0xffffffff81000320", "0xffffffffc0001010"}; !slices.Equal(got, want) {
		t.Fatalf("worker frames %q, want %q (the program's frame dropped, the rest as hex)", got, want)
	}
	if worker.kernel != nil || worker.kerr != nil {
		t.Error("the worker read kallsyms")
	}
	if named, want := host.NameStack(slices.Clone(got)), []string{"vfs_read+0x20", "virtblk_request_done+0x10"}; !slices.Equal(named, want) {
		t.Errorf("host names %q, want %q", named, want)
	}

	sm, err := ReadSystemMap(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Modules() {
		t.Error("System.map without modules: Modules() true")
	}
	if f := sm.Name("0xffffffffc0001010"); f != "0xffffffffc0001010" {
		t.Errorf("a System.map named a module's frame %q", f)
	}
}
