package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestDoctorNonRoot runs doctor as nobody: one FAIL line, privileges',
// saying to run as root or with CAP_BPF and CAP_PERFMON, and no line per
// tracer with the library's memlock hint.
func TestDoctorNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to run doctor as another user")
	}
	bin := buildTailgate(t)
	// t.TempDir's directories are root's alone.
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "doctor")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); cmd.ProcessState == nil {
		t.Fatal(err)
	}
	var fails []string
	for line := range strings.Lines(stdout.String()) {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == "FAIL" || f[0] == "FAIL") {
			fails = append(fails, line)
		}
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInfra || len(fails) != 1 || !strings.HasPrefix(fails[0], "privileges") ||
		!strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), "run as root, or grant CAP_BPF and CAP_PERFMON") ||
		strings.Contains(stdout.String(), "RemoveMemlock") || regexp.MustCompile(`(?m)^\S+ tracer `).MatchString(stdout.String()) ||
		!strings.Contains(stderr.String(), "1 check failed") {
		t.Errorf("doctor as nobody: exit %d, FAIL lines %q\nstdout:\n%s\nstderr: %s", code, fails, stdout.String(), stderr.String())
	}
}
