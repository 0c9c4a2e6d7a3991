package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestYAMLInputLimits: every YAML input tailgate reads gets the same
// limits: an alias bomb in a targets file and a scenario or targets file
// of 100 000 keys are exit 2 in one line naming the file, at once.
func TestYAMLInputLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var bomb, keys strings.Builder
	bomb.WriteString("targets:\n  - name: t\n    kernel: k\n    cmdline: &a [x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for i, n := range strings.Split("bcdefgh", "") {
		fmt.Fprintf(&bomb, "  - name: t%d\n    kernel: k\n    cmdline: &%s [%s*%s]\n", i, n, strings.Repeat("*"+prev+", ", 8), prev)
		prev = n
	}
	for i := range 100000 {
		fmt.Fprintf(&keys, "k%d: 1\n", i)
	}
	bombPath := write("bomb.yaml", bomb.String())
	keysTargets := write("keys-targets.yaml", "targets:\n  - name: t\n    kernel: k\n"+keys.String())
	keysScenario := write("keys-scenario.yaml", "name: x\nworkload:\n  kind: syscall\n"+keys.String())
	for _, c := range []edgeCase{
		{name: "targets alias bomb", args: []string{"run", "syscall-read", "--targets", bombPath, "--target", "t"}, want: []string{bombPath + ":4:", "aliases"}},
		{name: "targets of 100 000 keys", args: []string{"run", "syscall-read", "--targets", keysTargets, "--target", "t"}, want: []string{keysTargets + ":2048:", "more than 2048 keys"}},
		{name: "scenario of 100 000 keys", args: []string{"run", keysScenario}, want: []string{keysScenario + ":2049:", "more than 2048 keys"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			c.check(t)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refused after %v, want at once", d)
			}
		})
	}
}
