package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckFile refuses a file over the YAML limits as an *Error at its
// place, passes one within them and leaves a missing file to its loader.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.yaml", "targets:\n  - name: a\n    kernel: debian:6.1-cloud\n")
	deep := write("deep.yaml", strings.Repeat("[", MaxInputDepth+1)+strings.Repeat("]", MaxInputDepth+1)+"\n")
	large := write("large.yaml", "# "+strings.Repeat("x", MaxInputSize)+"\n")
	for _, path := range []string{"", ok, filepath.Join(dir, "missing.yaml")} {
		if err := CheckFile(path); err != nil {
			t.Errorf("CheckFile(%q) = %v, want nil", path, err)
		}
	}
	for _, c := range []struct{ path, want string }{
		{deep, "deep.yaml:1:"},
		{large, "the limit is"},
	} {
		err := CheckFile(c.path)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckFile(%s) = %v, want an *Error with %q", filepath.Base(c.path), err, c.want)
		}
	}
}
