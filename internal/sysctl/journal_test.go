package sysctl

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realKey is a writable parameter of the real kernel that is harmless to
// change for a moment; every test that writes it puts it back.
const realKey = "vm.swappiness"

func keepReal(t *testing.T) string {
	t.Helper()
	old, err := Read(Root, realKey)
	if err != nil {
		t.Skipf("needs %s: %v", realKey, err)
	}
	t.Cleanup(func() {
		if v, _ := Read(Root, realKey); v != old {
			if err := write(Root, realKey, old); err != nil {
				t.Errorf("could not put %s back to %s: %v", realKey, old, err)
			}
		}
	})
	return old
}

// TestProbeReadOnlyKey: a read-only key of the real kernel is refused by
// the probe, naming key and value, with nothing changed.
func TestProbeReadOnlyKey(t *testing.T) {
	old := value(t, Root, "kernel.osrelease")
	err := Probe(Root, []Setting{{Key: "kernel.osrelease", Value: "6.6.6-pwned"}})
	var pe *ProbeError
	if !errors.As(err, &pe) {
		t.Fatalf("Probe = %v, want a *ProbeError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "kernel.osrelease=6.6.6-pwned") || !strings.Contains(msg, "permission denied") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming key, value and why", msg)
	}
	if v := value(t, Root, "kernel.osrelease"); v != old {
		t.Errorf("kernel.osrelease = %q, was %q", v, old)
	}
}

// TestProbeRejectedValue: a value the real kernel rejects is refused by
// the probe; the key keeps its value and no journal is left.
func TestProbeRejectedValue(t *testing.T) {
	old := keepReal(t)
	for _, v := range []string{"lots", "1000"} {
		err := Probe(Root, []Setting{{Key: realKey, Value: v}})
		var pe *ProbeError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), realKey+"="+v) || !strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("Probe %s=%s = %v, want a *ProbeError saying invalid argument", realKey, v, err)
		}
		if got := value(t, Root, realKey); got != old {
			t.Errorf("%s = %s after the probe, was %s", realKey, got, old)
		}
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(Root), journalPrefix+"*")); len(js) > 0 {
		t.Errorf("journals left: %v", js)
	}
}

// TestProbeWritableKey: a value the kernel takes passes the probe and is
// put back.
func TestProbeWritableKey(t *testing.T) {
	old := keepReal(t)
	other := "61"
	if old == other {
		other = "62"
	}
	if err := Probe(Root, []Setting{{Key: realKey, Value: other}}); err != nil {
		t.Fatal(err)
	}
	if got := value(t, Root, realKey); got != old {
		t.Errorf("%s = %s after the probe, was %s", realKey, got, old)
	}
}

// TestMain is also the run that TestRecoverAfterSIGKILL kills: with
// TAILGATE_SYSCTL_CHILD set it sets the key to that value and waits to die.
func TestMain(m *testing.M) {
	if v := os.Getenv("TAILGATE_SYSCTL_CHILD"); v != "" {
		if _, err := Apply(Root, []Setting{{Key: realKey, Value: v}}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString("applied\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRecoverAfterSIGKILL: a run killed with SIGKILL while a real sysctl
// is changed leaves its journal; the next run's Recover puts the value
// back, says what it restored and removes the journal. A live run's
// journal is left alone.
func TestRecoverAfterSIGKILL(t *testing.T) {
	old := keepReal(t)
	other := "61"
	if old == other {
		other = "62"
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TAILGATE_SYSCTL_CHILD="+other)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "applied" {
	}
	if got := value(t, Root, realKey); got != other {
		t.Fatalf("child did not set %s: %s", realKey, got)
	}
	// Alive: its journal is its own.
	if restored, err := Recover(Root); err != nil || len(restored) != 0 || value(t, Root, realKey) != other {
		t.Fatalf("Recover during the run: %v, %v", restored, err)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	if got := value(t, Root, realKey); got != other {
		t.Fatalf("%s = %s after the kill, want it left at %s", realKey, got, other)
	}
	js, _ := filepath.Glob(filepath.Join(JournalDir(Root), journalPrefix+"*.json"))
	if len(js) != 1 {
		t.Fatalf("journals after the kill: %v, want one", js)
	}
	restored, err := Recover(Root)
	if err != nil || len(restored) != 1 || restored[0] != (Setting{Key: realKey, Value: old}) {
		t.Fatalf("Recover = %v, %v; want %s=%s", restored, err, realKey, old)
	}
	if got := value(t, Root, realKey); got != old {
		t.Errorf("%s = %s after Recover, want %s", realKey, got, old)
	}
	if _, err := os.Stat(js[0]); !os.IsNotExist(err) {
		t.Errorf("journal %s left: %v", js[0], err)
	}
}

// TestRecoverUnrestorable: a journal whose value cannot be written back
// stays, and the error says exactly what to set by hand.
func TestRecoverUnrestorable(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.a": "1"})
	j, err := writeJournal(JournalDir(root), root, []Setting{{Key: "vm.a", Value: "0"}, {Key: "vm.gone", Value: "7"}})
	if err != nil {
		t.Fatal(err)
	}
	j.release() // unlocked: the journal of a run that died
	restored, err := Recover(root)
	var re *RestoreError
	if !errors.As(err, &re) || len(restored) != 1 || value(t, root, "vm.a") != "0" {
		t.Fatalf("Recover = %v, %v; want vm.a restored and a *RestoreError for vm.gone", restored, err)
	}
	if !strings.Contains(err.Error(), "set it by hand: sysctl -w vm.gone=7") {
		t.Errorf("error %q does not say what to run", err)
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(root), journalPrefix+"*.json")); len(js) != 1 {
		t.Errorf("journals: %v, want the one kept", js)
	}
}

// TestJournalDirPlanted: a journal directory another user could write is
// refused, not read: its journals would choose what root writes.
func TestJournalDirPlanted(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.a": "1"})
	dir := JournalDir(root)
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if _, err := Apply(root, []Setting{{Key: "vm.a", Value: "2"}}); err == nil || value(t, root, "vm.a") != "1" {
		t.Errorf("Apply with a world-writable journal directory: %v", err)
	}
	if _, err := Recover(root); err == nil {
		t.Error("Recover read a world-writable journal directory")
	}
}
