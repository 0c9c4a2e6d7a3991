package vm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	staticOnce sync.Once
	staticPath string
	staticErr  error
)

// buildStaticBinary builds the test guest with CGO_ENABLED=0, once per test
// binary.
func buildStaticBinary(t *testing.T) string {
	t.Helper()
	staticOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vm-guest-")
		if err != nil {
			staticErr = err
			return
		}
		staticPath = filepath.Join(dir, "guest")
		cmd := exec.Command("go", "build", "-o", staticPath, "./testdata/guest")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			staticErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if staticErr != nil {
		t.Fatalf("build test guest: %v", staticErr)
	}
	return staticPath
}

func TestParseLoaderList(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f04)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f05)\n"
	got, err := parseLoaderList([]byte(out))
	if err != nil || !slices.Equal(got, []string{"/lib/x86_64-linux-gnu/libc.so.6"}) {
		t.Errorf("parseLoaderList = %v, %v", got, err)
	}
	if _, err := parseLoaderList([]byte("\tlibfoo.so.1 => not found\n")); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("a missing library: %v, want it named", err)
	}
}

func TestGuestFilesStatic(t *testing.T) {
	files, err := GuestFiles(buildStaticBinary(t))
	if err != nil || len(files) != 0 {
		t.Errorf("GuestFiles(static) = %v, %v; want nothing", files, err)
	}
	// The system's sh is dynamic: its loader and libc come along.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	files, err = GuestFiles(sh)
	if err != nil || len(files) < 2 {
		t.Errorf("GuestFiles(%s) = %v, %v; want its loader and libraries", sh, files, err)
	}
}

func TestCheckStatic(t *testing.T) {
	if err := CheckStatic(buildStaticBinary(t)); err != nil {
		t.Errorf("static guest: %v", err)
	}
	// The system's own tools are dynamic.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	sh, _ = filepath.EvalSymlinks(sh)
	if err := CheckStatic(sh); !errors.Is(err, ErrNotStatic) {
		t.Errorf("CheckStatic(%s) = %v, want ErrNotStatic", sh, err)
	}
	text := filepath.Join(t.TempDir(), "script")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	if err := CheckStatic(text); err == nil {
		t.Errorf("CheckStatic(script) succeeded")
	}
}
