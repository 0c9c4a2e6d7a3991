package vmtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
