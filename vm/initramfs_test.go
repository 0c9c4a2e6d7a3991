package vm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
