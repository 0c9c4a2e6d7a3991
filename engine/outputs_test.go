package engine

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckOutputReadOnly: root's permissions do not make a read-only
// mount writable; the check says so before a run.
func TestCheckOutputReadOnly(t *testing.T) {
	ro := t.TempDir()
	if err := unix.Mount("tailgate-test", ro, "tmpfs", unix.MS_RDONLY, "size=64k"); err != nil {
		t.Fatalf("mount a read-only tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ro, unix.MNT_DETACH) })
	path := filepath.Join(ro, "r.json")
	err := CheckOutput(path)
	var in *InputError
	if !errors.As(err, &in) || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not writable") {
		t.Errorf("CheckOutput(%s) = %v, want an InputError saying it is not writable", path, err)
	}
	for _, ok := range []string{"", "-", "/dev/null", filepath.Join(t.TempDir(), "r.json")} {
		if err := CheckOutput(ok); err != nil {
			t.Errorf("CheckOutput(%q) = %v, want nil", ok, err)
		}
	}
}
