package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJUnitOnInfraFailure: a gate or matrix that cannot judge (exit 3)
// still writes its JUnit file, an <error> case naming the failure, valid
// for the xUnit schema; an exit 0 or 1 writes the report as before.
func TestJUnitOnInfraFailure(t *testing.T) {
	for _, cmd := range []string{"gate", "matrix"} {
		t.Run(cmd, func(t *testing.T) {
			root := fakeSysctls(t)
			f := &fakeExec{during: func(_ context.Context, target string) error {
				if target == "low" {
					return errors.New("attach sched: boom")
				}
				return nil
			}}
			junit := filepath.Join(t.TempDir(), "junit.xml")
			args := []string{"--variant", "base", "--variant", "low:vm.swappiness=10", "syscall-read", "--format", "junit=" + junit}
			run := runGate
			if cmd == "matrix" {
				run = runMatrix
				args = append(args, "--trials", "2")
			}
			var o, e bytes.Buffer
			err := run(context.Background(), args, &o, &e, f.env(root))
			if code := exitCode(err); code != exitInfra {
				t.Fatalf("exit %d (%v), want %d", code, err, exitInfra)
			}
			b, rerr := os.ReadFile(junit)
			if rerr != nil {
				t.Fatalf("no JUnit file after exit 3: %v", rerr)
			}
			if !strings.Contains(string(b), "<error") || !strings.Contains(string(b), "boom") {
				t.Errorf("JUnit of the failure lacks an <error> naming it:\n%s", b)
			}
			if xmllint, lerr := exec.LookPath("xmllint"); lerr == nil {
				out, verr := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "..", "report", "render", "testdata", "junit-10.xsd"), junit).CombinedOutput()
				if verr != nil {
					t.Errorf("the error document fails junit-10.xsd: %v\n%s", verr, out)
				}
			}
		})
	}
}
