package ufunc

import (
	"os"
	"testing"
)

// TestMain removes the test programs' build directories, which the
// tests share, once all have run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{buildDir, goBuildDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}
