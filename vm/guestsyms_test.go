package vm

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
)

// A System.map is read once per process while the file stays the same,
// and again once it changes.
func TestReadSystemMapKeepsWhatItRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kallsyms")
	write := func(s string, at time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Unix(1_700_000_000, 0)
	write("ffffffff81000000 T _stext\nffffffff81000200 t pipe_read\nffffffff81100000 T _etext\n", at)
	first := readSystemMap(path)
	if first == nil || first.Name("0xffffffff81000210") != "pipe_read+0x10" {
		t.Fatalf("first read %v", first)
	}
	if again := readSystemMap(path); again != first {
		t.Error("the same file read again instead of kept")
	}
	write("ffffffff81000000 T _stext\nffffffff81000200 t anon_pipe_read\nffffffff81100000 T _etext\n", at.Add(time.Second))
	changed := readSystemMap(path)
	if changed == first || changed == nil || changed.Name("0xffffffff81000210") != "anon_pipe_read+0x10" {
		t.Errorf("a changed file gave the kept map (or none): %v", changed)
	}
	if readSystemMap(filepath.Join(t.TempDir(), "none")) != nil {
		t.Error("a missing file gave a map")
	}
}

// The symbols a guest sent are kept beside a cached kernel booted from its
// ELF, and only if they name the kernel's text.
func TestKeepKallsyms(t *testing.T) {
	dir := t.TempDir()
	k := &kernels.Kernel{Dir: dir, Vmlinux: filepath.Join(dir, "vmlinux")}
	sent := filepath.Join(t.TempDir(), "kallsyms")
	write := func(text string) {
		if err := os.WriteFile(sent, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	keepKallsyms(k, sent)
	if systemMap(k) != nil {
		t.Fatal("nothing sent, yet the cache names frames")
	}
	write("ffffffff81000000 T _stext\nffffffff81000200 t pipe_read\nffffffff82000000 T _etext\n")
	keepKallsyms(k, sent)
	m := systemMap(k)
	if m == nil {
		t.Fatal("the guest's symbols were not kept")
	}
	if got := m.Name("0xffffffff81000210"); got != "pipe_read+0x10" {
		t.Errorf("kept symbols name %q", got)
	}
	if kallsymsCache(&kernels.Kernel{Dir: dir}) != "" || kallsymsCache(&kernels.Kernel{Vmlinux: k.Vmlinux}) != "" {
		t.Error("a kernel booted from its bzImage (KASLR) or not cached would use kept symbols")
	}
}

// A guest leaves its kernel frames as hex for the host to name from the
// kernel's symbols: the slowest events' stacks and the stacks sampled in
// its slowest requests alike.
func TestNameGuestFramesNamesProfiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "System.map")
	if err := os.WriteFile(path, []byte("ffffffff81000000 T _stext\nffffffff81000200 t pipe_read\nffffffff81100000 T _etext\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := readSystemMap(path)
	if m == nil {
		t.Fatal("no map")
	}
	res := &result.Result{Scenarios: []result.Scenario{{Name: "s", Metrics: map[string]*result.Metric{"request.server": {Trials: []result.Trial{{
		Slowest: []result.Event{{KernelStack: []string{"0xffffffff81000210"}}},
		Profile: &result.Profile{Samples: []result.StackSample{{Kernel: []string{"0xffffffff81000210"}, User: []string{"handler"}, Count: 3}}},
	}}}}}}}
	nameGuestFrames(res, m)
	tr := res.Scenarios[0].Metrics["request.server"].Trials[0]
	if got := tr.Slowest[0].KernelStack; len(got) != 1 || got[0] != "pipe_read+0x10" {
		t.Errorf("slowest event's stack %q, want pipe_read+0x10", got)
	}
	if got := tr.Profile.Samples[0].Kernel; len(got) != 1 || got[0] != "pipe_read+0x10" {
		t.Errorf("profile sample's kernel stack %q, want pipe_read+0x10", got)
	}
	if got := tr.Profile.Samples[0].User; len(got) != 1 || got[0] != "handler" {
		t.Errorf("profile sample's user stack %q changed", got)
	}
}
