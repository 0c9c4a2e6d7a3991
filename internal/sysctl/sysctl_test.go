package sysctl

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// fakeRoot makes a /proc/sys look-alike holding the given key=value files.
func fakeRoot(t *testing.T, kv map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for k, v := range kv {
		p, err := Path(root, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func value(t *testing.T, root, key string) string {
	t.Helper()
	v, err := Read(root, key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Setting
		err      string
	}{
		{name: "dotted", in: "vm.swappiness=10", want: Setting{"vm.swappiness", "10"}},
		{name: "spaces", in: " net.ipv4.ip_local_port_range = 32768 60999 ", want: Setting{"net.ipv4.ip_local_port_range", "32768 60999"}},
		{name: "slashed", in: "net/ipv4/conf/eth0.1/rp_filter=0", want: Setting{"net/ipv4/conf/eth0.1/rp_filter", "0"}},
		{name: "no value", in: "vm.swappiness", err: "want KEY=VALUE"},
		{name: "empty value", in: "vm.swappiness=", err: "empty value"},
		{name: "escape", in: "../../etc/passwd=x", err: "not a sysctl name"},
		{name: "empty component", in: "vm..swappiness=1", err: "not a sysctl name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestApplyRestore(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60", "kernel.timer_migration": "1"})
	a, err := Apply(root, []Setting{{"vm.swappiness", "10"}, {"kernel.timer_migration", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := value(t, root, "vm.swappiness"); v != "10" {
		t.Errorf("applied vm.swappiness = %q, want 10", v)
	}
	if v := value(t, root, "kernel.timer_migration"); v != "0" {
		t.Errorf("applied kernel.timer_migration = %q, want 0", v)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	if v := value(t, root, "vm.swappiness"); v != "60" {
		t.Errorf("restored vm.swappiness = %q, want 60", v)
	}
	if v := value(t, root, "kernel.timer_migration"); v != "1" {
		t.Errorf("restored kernel.timer_migration = %q, want 1", v)
	}
	if err := a.Restore(); err != nil {
		t.Errorf("second Restore: %v", err)
	}
}

// A write that fails part way through puts back what was already written.
func TestApplyRestoresAfterLaterFailure(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60"})
	// A directory where the file should be: opening it for writing fails.
	if err := os.MkdirAll(filepath.Join(root, "kernel", "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Apply(root, []Setting{{"vm.swappiness", "10"}, {"kernel.broken", "1"}})
	if err == nil || !strings.Contains(err.Error(), "kernel.broken") {
		t.Fatalf("Apply = %v, want an error naming kernel.broken", err)
	}
	if v := value(t, root, "vm.swappiness"); v != "60" {
		t.Errorf("vm.swappiness = %q after a failed Apply, want 60 restored", v)
	}
	_, err = Apply(root, []Setting{{"vm.swappiness", "10"}, {"kernel.missing", "1"}})
	if err == nil || !strings.Contains(err.Error(), "no such parameter") {
		t.Fatalf("Apply = %v, want no such parameter", err)
	}
	if v := value(t, root, "vm.swappiness"); v != "60" {
		t.Errorf("vm.swappiness = %q after a failed Apply, want 60 restored", v)
	}
}

func TestRestoreFailureNamesKeyAndValue(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60", "kernel.timer_migration": "1"})
	a, err := Apply(root, []Setting{{"vm.swappiness", "10"}, {"kernel.timer_migration", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Path(root, "vm.swappiness")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	err = a.Restore()
	var re *RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("Restore = %v, want a *RestoreError", err)
	}
	if len(re.Failed) != 1 || re.Failed[0].Setting != (Setting{"vm.swappiness", "60"}) {
		t.Fatalf("failed = %+v, want vm.swappiness=60 alone", re.Failed)
	}
	if !strings.Contains(err.Error(), "sysctl -w vm.swappiness=60") {
		t.Errorf("error %q does not say how to set it by hand", err)
	}
	// The others are restored all the same.
	if v := value(t, root, "kernel.timer_migration"); v != "1" {
		t.Errorf("kernel.timer_migration = %q, want 1 restored", v)
	}
}

// The real thing, on a harmless parameter.
func TestProcSys(t *testing.T) {
	const key = "vm.swappiness"
	testenv.Need(t, testenv.Sysctl(key))
	testenv.Need(t, testenv.Root) // to write /proc/sys
	old, err := Read(Root, key)
	if err != nil {
		t.Fatal(err)
	}
	want := "61"
	if old == want {
		want = "59"
	}
	a, err := Apply(Root, []Setting{{key, want}})
	if err != nil {
		t.Fatal(err)
	}
	if v := value(t, Root, key); v != want {
		t.Errorf("%s = %q while applied, want %q", key, v, want)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	if v := value(t, Root, key); v != old {
		t.Errorf("%s = %q after Restore, want %q", key, v, old)
	}
}

// TestSuspendResume: a suspended setting reads its old value with the
// journal still on disk, resumed it reads the new one, and Restore ends
// it: the old value back, the journal gone, Resume refused.
func TestSuspendResume(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60", "kernel.timer_migration": "1"})
	a, err := Apply(root, []Setting{{"vm.swappiness", "10"}, {"kernel.timer_migration", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	journals := func() int {
		m, _ := filepath.Glob(filepath.Join(JournalDir(root), "*.json"))
		return len(m)
	}
	for i := range 3 {
		if err := a.Suspend(); err != nil {
			t.Fatal(err)
		}
		if v, w := value(t, root, "vm.swappiness"), value(t, root, "kernel.timer_migration"); v != "60" || w != "1" {
			t.Fatalf("suspended %d: vm.swappiness=%s kernel.timer_migration=%s, want 60 and 1", i, v, w)
		}
		if n := journals(); n != 1 {
			t.Fatalf("suspended %d: %d journals, want 1 (kept until Restore)", i, n)
		}
		if err := a.Resume(); err != nil {
			t.Fatal(err)
		}
		if v, w := value(t, root, "vm.swappiness"), value(t, root, "kernel.timer_migration"); v != "10" || w != "0" {
			t.Fatalf("resumed %d: vm.swappiness=%s kernel.timer_migration=%s, want 10 and 0", i, v, w)
		}
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	if v := value(t, root, "vm.swappiness"); v != "60" {
		t.Fatalf("restored: vm.swappiness=%s, want 60", v)
	}
	if n := journals(); n != 0 {
		t.Fatalf("restored: %d journals left, want 0", n)
	}
	if err := a.Resume(); err == nil {
		t.Fatal("Resume after Restore: no error")
	}
}

// TestCheckRefusesWhatCannotBePutBack: keys of the real kernel that are
// read-only and change by themselves (fs.file-nr, kernel.random.uuid) are
// refused before anything is written, naming the key and why; nothing is
// journalled. So are a key that changes between reads and a value the
// kernel never lets go of.
func TestCheckRefusesWhatCannotBePutBack(t *testing.T) {
	for _, key := range []string{"fs.file-nr", "kernel.random.uuid"} {
		s := Setting{Key: key, Value: "1"}
		err := Probe(Root, []Setting{s})
		var ke *KeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), "sysctl "+key+"=1 cannot be set: the key is read-only") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Probe %s = %v; want one line: a *KeyError saying it is read-only", s, err)
		}
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(Root), journalPrefix+"*")); len(js) > 0 {
		t.Errorf("journals left: %v", js)
	}

	root := fakeRoot(t, map[string]string{"kernel.ns_last_pid": "100", "kernel.modules_disabled": "0"})
	p, _ := Path(root, "kernel.ns_last_pid")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the kernel counting forks
		defer close(done)
		for n := 101; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(p, []byte(strconv.Itoa(n)+"\n"), 0o644)
		}
	}()
	err := Probe(root, []Setting{{Key: "kernel.ns_last_pid", Value: "1"}})
	close(stop)
	<-done
	if ke := (*KeyError)(nil); !errors.As(err, &ke) || !strings.Contains(err.Error(), "changes the key by itself") {
		t.Errorf("Probe of a key that changes by itself = %v; want a *KeyError saying so", err)
	}
	err = Probe(root, []Setting{{Key: "kernel.modules_disabled", Value: "1"}})
	if ke := (*KeyError)(nil); !errors.As(err, &ke) || !strings.Contains(err.Error(), "until the next boot") || value(t, root, "kernel.modules_disabled") != "0" {
		t.Errorf("Probe of a one-way value = %v; want a *KeyError and nothing written", err)
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(root), journalPrefix+"*")); len(js) > 0 {
		t.Errorf("journals left: %v", js)
	}
}

// TestApplyUnopenedKeyNotRestored: a key the kernel would not open for
// writing was not changed, so a failed Apply does not try to put it back
// (a key that changes by itself would read as still changed) and leaves
// no journal.
func TestApplyUnopenedKeyNotRestored(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60", "fs.file-nr": "1 0 100"})
	p, _ := Path(root, "fs.file-nr")
	os.Chmod(p, 0o444)
	if os.Geteuid() == 0 {
		// Root opens a 0444 file of a tmpfs; not one of /proc/sys.
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/proc/sys/fs/file-nr", p); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Apply(root, []Setting{{"vm.swappiness", "10"}, {"fs.file-nr", "1"}})
	if ne := (*NotWrittenError)(nil); !errors.As(err, &ne) || errors.As(err, new(*RestoreError)) {
		t.Fatalf("Apply = %v; want a *NotWrittenError and no *RestoreError", err)
	}
	if v := value(t, root, "vm.swappiness"); v != "60" {
		t.Errorf("vm.swappiness = %s, want 60 restored", v)
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(root), journalPrefix+"*")); len(js) > 0 {
		t.Errorf("journals left: %v", js)
	}
}

// TestCheckReadsValuesAsTheKernel: a one-way value is refused however it
// is spelt, since the kernel reads integers base 0 (01 and 0x1 are 1),
// and kernel.tainted, whose bits the kernel only ever adds, is refused
// whatever the value; values the kernel lets go of pass.
func TestCheckReadsValuesAsTheKernel(t *testing.T) {
	start := map[string]string{"kernel.unprivileged_bpf_disabled": "2", "kernel.modules_disabled": "0",
		"kernel.yama.ptrace_scope": "1", "kernel.tainted": "0", "kernel.kexec_load_limit_panic": "5"}
	for _, c := range []struct {
		s       Setting
		refused bool
	}{
		{Setting{"kernel.unprivileged_bpf_disabled", "1"}, true},
		{Setting{"kernel.unprivileged_bpf_disabled", "01"}, true},
		{Setting{"kernel.unprivileged_bpf_disabled", "0x1"}, true},
		{Setting{"kernel.unprivileged_bpf_disabled", "0X01"}, true},
		{Setting{"kernel.unprivileged_bpf_disabled", "1 0"}, true},
		{Setting{"kernel/unprivileged_bpf_disabled", "1"}, true},
		{Setting{"kernel.unprivileged_bpf_disabled", "2"}, false},
		{Setting{"kernel.unprivileged_bpf_disabled", "0x2"}, false},
		{Setting{"kernel.modules_disabled", "001"}, true},
		{Setting{"kernel.yama.ptrace_scope", "03"}, true},
		{Setting{"kernel.yama.ptrace_scope", "0x3"}, true},
		{Setting{"kernel.yama.ptrace_scope", "2"}, false},
		{Setting{"kernel.tainted", "1"}, true},
		{Setting{"kernel.tainted", "0x4000"}, true},
		{Setting{"kernel.kexec_load_limit_panic", "4"}, true},
		{Setting{"kernel.kexec_load_limit_panic", "5"}, false},
	} {
		root := fakeRoot(t, start)
		err := Probe(root, []Setting{c.s})
		var ke *KeyError
		if refused := errors.As(err, &ke); refused != c.refused {
			t.Errorf("Probe %s = %v; refused %v, want %v", c.s, err, refused, c.refused)
		}
		for k, v := range start {
			if got := value(t, root, k); got != v {
				t.Errorf("Probe %s: %s reads %q, want %q", c.s, k, got, v)
			}
		}
	}
	// The real kernel's own keys, checked without a write.
	if _, err := Read(Root, "kernel.unprivileged_bpf_disabled"); err == nil {
		for _, v := range []string{"01", "0x1", " 1"} {
			if err := Check(Root, Setting{Key: "kernel.unprivileged_bpf_disabled", Value: v}); !errors.As(err, new(*KeyError)) {
				t.Errorf("Check kernel.unprivileged_bpf_disabled=%s = %v, want a *KeyError", v, err)
			}
		}
	}
	if err := Check(Root, Setting{Key: "kernel.tainted", Value: "0x1"}); !errors.As(err, new(*KeyError)) {
		t.Errorf("Check kernel.tainted=0x1 = %v, want a *KeyError", err)
	}
}

// TestKernelIntAgreesWithTheKernel writes spellings of numbers to a
// harmless integer key of the real kernel, and wherever the kernel takes
// one, kernelInt reads the number the kernel read.
func TestKernelIntAgreesWithTheKernel(t *testing.T) {
	const key = "kernel.printk_ratelimit_burst"
	old, err := Read(Root, key)
	if err != nil {
		t.Skipf("needs %s: %v", key, err)
	}
	p, _ := Path(Root, key)
	defer os.WriteFile(p, []byte(old+"\n"), 0)
	took := 0
	for _, v := range []string{"010", "0x1f", "0X1F", "  12", "\t7", "07", "+5", "0b1", "09", "1 2", "0o7", "1_0", "12abc"} {
		if err := os.WriteFile(p, []byte(v), 0); err != nil {
			continue // the kernel refused it: so does the probe write
		}
		back, err := Read(Root, key)
		if err != nil {
			t.Fatal(err)
		}
		took++
		n, ok := kernelInt(v)
		if want, _ := strconv.ParseInt(back, 10, 64); !ok || n != want {
			t.Errorf("the kernel read %q as %s; kernelInt read %d (%v)", v, back, n, ok)
		}
	}
	if took < 6 {
		t.Errorf("the kernel took %d spellings, want at least the 6 plain ones", took)
	}
}
