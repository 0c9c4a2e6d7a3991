package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/sysctl"
)

// TestVariantUnwritableSysctlBeforeTrials: a read-only key of the real
// kernel, or a value it rejects, is exit 2 in one line naming key and
// value, before any trial of the base, for gate and matrix alike; the key
// keeps its value.
func TestVariantUnwritableSysctlBeforeTrials(t *testing.T) {
	swap, err := sysctl.Read(sysctl.Root, "vm.swappiness")
	if err != nil {
		t.Skipf("needs vm.swappiness: %v", err)
	}
	for _, tc := range []struct{ variant, want string }{
		{"head:kernel.osrelease=6.6.6-pwned", "kernel.osrelease=6.6.6-pwned cannot be set on this kernel: permission denied"},
		{"head:vm.swappiness=lots", "vm.swappiness=lots cannot be set on this kernel: invalid argument"},
	} {
		for _, command := range []string{"gate", "matrix"} {
			t.Run(command+" "+tc.variant, func(t *testing.T) {
				var f fakeExec
				args := []string{"syscall-read", "--variant", "base", "--variant", tc.variant}
				run := runGate
				if command == "matrix" {
					run = runMatrix
				}
				var out bytes.Buffer
				err := run(context.Background(), args, &out, &out, f.env(sysctl.Root))
				code, stderr := exitCode(err), fmt.Sprint(err)
				if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") > 1 {
					t.Errorf("exit %d, stderr %q; want %d and one line saying %q", code, stderr, exitUsage, tc.want)
				}
				if len(f.calls) > 0 {
					t.Errorf("trials ran before the refusal: %v", f.calls)
				}
			})
		}
	}
	if v, _ := sysctl.Read(sysctl.Root, "vm.swappiness"); v != swap {
		t.Errorf("vm.swappiness = %s, was %s", v, swap)
	}
}

// TestVariantSysctlRestoredAfterSIGKILL: tailgate matrix killed with
// SIGKILL while a variant's sysctl is in force leaves it changed; the next
// gate puts it back from the journal before it runs anything.
func TestVariantSysctlRestoredAfterSIGKILL(t *testing.T) {
	const key = "vm.swappiness"
	orig, err := sysctl.Read(sysctl.Root, key)
	if err != nil {
		t.Skipf("needs %s: %v", key, err)
	}
	t.Cleanup(func() {
		if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
			os.WriteFile("/proc/sys/vm/swappiness", []byte(orig), 0o644)
		}
	})
	want := "61"
	if orig == want {
		want = "59"
	}
	bin := buildTailgate(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "tick.yaml")
	if err := os.WriteFile(sc, []byte("name: tick\nworkload: {kind: timer, interval: 1ms}\ntrials: 3\nwarmup: 0s\nduration: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "matrix", sc, "--variant", "swap:"+key+"="+want, "--variant", "base")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "CI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The probe sets the value for a moment too: wait for the trial.
		if v, _ := sysctl.Read(sysctl.Root, key); v == want && strings.Contains(stderr.String(), "tick") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s in a trial\n%s", key, want, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no chance to restore
	cmd.Wait()
	if v, _ := sysctl.Read(sysctl.Root, key); v != want {
		t.Fatalf("%s = %s after SIGKILL, want it left at %s\n%s", key, v, want, stderr.String())
	}
	var f fakeExec
	f.during = func(_ context.Context, target string) error {
		if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
			t.Errorf("%s = %s during %s's trial, want %s restored before it", key, v, target, orig)
		}
		return nil
	}
	runGateWith(f.env(sysctl.Root), "syscall-read", "--variant", "base", "--variant", "head", "--trials", "2")
	if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
		t.Errorf("%s = %s after the next gate, want %s restored", key, v, orig)
	}
	if js, _ := filepath.Glob(filepath.Join(sysctl.JournalDir(sysctl.Root), "sysctl-*.json")); len(js) > 0 {
		t.Errorf("journals left: %v", js)
	}
}
