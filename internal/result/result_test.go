package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRejects(t *testing.T) {
	good, err := Marshal(sample("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(good); err != nil {
		t.Fatalf("good document: %v", err)
	}
	tests := []struct {
		name string
		doc  string
		want error
	}{
		{"truncated", string(good[:len(good)/2]), ErrCorrupt},
		{"future", `{"schema": 99}`, ErrFutureSchema},
		{"no schema", `{"scenarios": []}`, ErrCorrupt},
		{"unknown field", `{"schema": 1, "surprise": true}`, ErrCorrupt},
		{"null metric", `{"schema": 1, "scenarios": [{"name": "a", "metrics": {"m": null}}]}`, ErrCorrupt},
		{"bucket counts overflow", `{"schema": 1, "scenarios": [{"name": "a", "metrics": {"m": {"unit": "ns", "trials": [{"histogram": {"scheme": "loglinear-k6-e42", "count": 0, "min": 1, "max": 2, "buckets": [[1, 9223372036854775808], [2, 9223372036854775808]]}}]}}}]}`, ErrCorrupt},
		{"trial counts overflow", `{"schema": 1, "scenarios": [{"name": "a", "metrics": {"m": {"unit": "ns", "trials": [` +
			`{"histogram": {"scheme": "loglinear-k6-e42", "count": 9223372036854775808, "min": 1, "max": 1, "buckets": [[1, 9223372036854775808]]}},` +
			`{"histogram": {"scheme": "loglinear-k6-e42", "count": 9223372036854775808, "min": 1, "max": 1, "buckets": [[1, 9223372036854775808]]}}]}}}]}`, ErrCorrupt},
		{"bad histogram", `{"schema": 1, "scenarios": [{"name": "a", "metrics": {"m": {"unit": "ns", "trials": [{"histogram": {"scheme": "loglinear-k6-e42", "count": 3, "buckets": [[1, 1]]}}]}}}]}`, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.doc)); !errors.Is(err, tt.want) {
				t.Errorf("Parse: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestWriteAtomicKeepsOldFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := Write(path, sample("a")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	// A directory that cannot be written to: the temp file cannot be made,
	// and the existing file must be untouched.
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if os.Geteuid() == 0 {
		// root ignores directory permissions; make the rename fail instead
		// by writing over a path whose parent is a file.
		os.Chmod(dir, 0o700)
		if err := Write(filepath.Join(path, "x.json"), sample("b")); err == nil {
			t.Fatal("write under a file succeeded")
		}
	} else if err := Write(path, sample("b")); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("existing result changed by a failed write")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

// TestLoadRefusesTooLarge: a file over MaxSize is refused from its size,
// without reading it (the file is sparse: reading it would take seconds).
func TestLoadRefusesTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema": 1, "scenarios": [`)
	if err := f.Truncate(MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	_, err = Load(path)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("Load = %v, want ErrTooLarge naming %s and the limit", err, path)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Load took %v: it read the file", d)
	}
}
