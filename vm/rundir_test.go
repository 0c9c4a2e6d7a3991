package vm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/kernels"
)

// runDirs lists the run directories in tmp.
func runDirs(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, runDirPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRemoveStaleRunDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(name string, files map[string]string, age time.Duration) string {
		t.Helper()
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for f, content := range files {
			p := filepath.Join(d, f)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(p, time.Now().Add(-age), time.Now().Add(-age))
		}
		os.Chtimes(d, time.Now().Add(-age), time.Now().Add(-age))
		return d
	}
	live, err := newRunDir("live", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	dead := mk(runDirPrefix+"dead-1", map[string]string{pidFile: "4194304\n", initrdFile: "x", consoleFile: "log"}, 0)
	legacyOld := mk(runDirPrefix+"123", map[string]string{initrdFile: "x", resultsFile: ""}, 48*time.Hour)
	legacyNew := mk(runDirPrefix+"456", map[string]string{initrdFile: "x"}, time.Minute)
	keptLog := mk(runDirPrefix+"failed-1", map[string]string{consoleFile: "log"}, 48*time.Hour)
	other := mk("other-1", map[string]string{pidFile: "4194304\n"}, 0)
	// A planted symlink of a run directory's name is not followed.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, pidFile), []byte("4194304\n"), 0o600)
	link := filepath.Join(tmp, runDirPrefix+"link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	var lines []string
	next, err := newRunDir("next/../x", func(s string) { lines = append(lines, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer next.remove()
	if filepath.Dir(next.path) != tmp || !strings.HasPrefix(filepath.Base(next.path), runDirPrefix+"next_.._x-") {
		t.Errorf("run directory %s", next.path)
	}
	for _, gone := range []string{dead, legacyOld} {
		if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed: %v", gone, err)
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, gone) }) {
			t.Errorf("progress %q does not name %s", lines, gone)
		}
	}
	for _, kept := range []string{live.path, legacyNew, keptLog, other, link, filepath.Join(outside, pidFile)} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s removed: %v", kept, err)
		}
	}
	if len(lines) != 2 {
		t.Errorf("progress = %q, want two removals", lines)
	}

	// A finished run leaves nothing; a failed one only its console log,
	// which is no longer a run's.
	live.remove()
	if _, err := os.Lstat(live.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed run directory: %v", err)
	}
	failed, err := newRunDir("failed", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{initrdFile, resultsFile, consoleFile} {
		os.WriteFile(failed.file(f), []byte("x"), 0o600)
	}
	failed.keepOnly(consoleFile)
	if ents, _ := os.ReadDir(failed.path); len(ents) != 1 || ents[0].Name() != consoleFile {
		t.Errorf("kept run directory holds %v, want %s alone", ents, consoleFile)
	}
	if removed := removeStaleRunDirs(tmp); len(removed) != 0 {
		t.Errorf("swept %v", removed)
	}
}

// fakeQEMURun runs a VM whose QEMU is a script that prints a console line
// and fails, so Run goes through its whole setup and keeps the console log.
func fakeQEMURun(t *testing.T, name, consoleLog string) *VMError {
	t.Helper()
	qemu := filepath.Join(t.TempDir(), "qemu")
	os.WriteFile(qemu, []byte("#!/bin/sh\necho fake qemu console line\necho no machine >&2\nexit 1\n"), 0o755)
	vm := Machine{Name: name, Kernel: &kernels.Kernel{Spec: "fake", Image: "/nonexistent/vmlinuz"}, Init: buildStaticBinary(t),
		QEMU: qemu, Setup: mustSetup(t, Settings{Accel: "tcg"}), ConsoleLog: consoleLog}
	_, err := Run(context.Background(), vm, GuestRequest{}, func(s string) { t.Log(s) })
	var ve *VMError
	if !errors.As(err, &ve) {
		t.Fatalf("Run with a failing QEMU: %v, want a *VMError", err)
	}
	if !strings.Contains(err.Error(), "console log: "+ve.ConsoleLog) {
		t.Errorf("error does not name the console log %s: %v", ve.ConsoleLog, err)
	}
	return ve
}

// TestRunConsoleLogPlantedSymlink plants a symlink at the console log name
// tailgate once used, $TMPDIR/tailgate-TARGET.console.log, and passes it
// as Machine.ConsoleLog as the CLI does: the symlink's target is not written,
// and the console is in the run's own directory.
func TestRunConsoleLogPlantedSymlink(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	fixed := filepath.Join(tmp, "tailgate-e2e.console.log")
	if err := os.Symlink(victim, fixed); err != nil {
		t.Fatal(err)
	}
	first := fakeQEMURun(t, "e2e", fixed)
	second := fakeQEMURun(t, "e2e", fixed)
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("symlink target written: %q", b)
	}
	if st, err := os.Lstat(fixed); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("planted symlink: %v, %v", st, err)
	}
	for _, ve := range []*VMError{first, second} {
		dir := filepath.Dir(ve.ConsoleLog)
		if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), runDirPrefix+"e2e-") || filepath.Base(ve.ConsoleLog) != consoleFile {
			t.Errorf("console log %s, want %s/%se2e-*/%s", ve.ConsoleLog, tmp, runDirPrefix, consoleFile)
		}
		if b, err := os.ReadFile(ve.ConsoleLog); err != nil || !strings.Contains(string(b), "fake qemu console line") {
			t.Errorf("console log %s: %q, %v", ve.ConsoleLog, b, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("failed run left %v in %s, want the console log alone", ents, dir)
		}
	}
	if first.ConsoleLog == second.ConsoleLog {
		t.Errorf("two runs share the console log %s", first.ConsoleLog)
	}
}
