package result

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MergeFiles loads and merges Result files, and refuses a file named
// twice or under two names (a link) before loading: its trials would
// count twice.
func TestMergeFiles(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "1.json"), filepath.Join(dir, "2.json")
	if err := Write(one, again(sample("a"), 1)); err != nil {
		t.Fatal(err)
	}
	if err := Write(two, again(sample("a", "b"), 2)); err != nil {
		t.Fatal(err)
	}
	m, err := MergeFiles([]string{one, two}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Find("a").Trials != 2 || m.Find("b").Trials != 1 {
		t.Errorf("merged a %d trials, b %d; want 2 and 1", m.Find("a").Trials, m.Find("b").Trials)
	}

	link := filepath.Join(dir, "link.json")
	if err := os.Link(one, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{one, two, one}, one + " is named twice"},
		{[]string{one, link}, one + " and " + link + " are the same file"},
	} {
		if _, err := MergeFiles(c.files, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MergeFiles(%v) = %v, want %q", c.files, err, c.want)
		}
	}
	if _, err := MergeFiles([]string{one, filepath.Join(dir, "none.json")}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}
