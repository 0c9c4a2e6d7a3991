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

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// realKey is a writable parameter of the real kernel that is harmless to
// change for a moment; every test that writes it puts it back.
const realKey = "vm.swappiness"

func keepReal(t *testing.T) string {
	t.Helper()
	testenv.Need(t, testenv.Sysctl(realKey))
	old, err := Read(Root, realKey)
	if err != nil {
		t.Fatal(err)
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
	if msg := err.Error(); !strings.Contains(msg, "kernel.osrelease=6.6.6-pwned") || !strings.Contains(msg, "read-only") || strings.Contains(msg, "\n") {
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
		root := Root
		if r := os.Getenv("TAILGATE_SYSCTL_CHILD_ROOT"); r != "" {
			root = r
		}
		if _, err := Apply(root, []Setting{{Key: realKey, Value: v}}); err != nil {
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
	if rec, err := Recover(Root); err != nil || len(rec.Restored)+len(rec.SetAside) != 0 || value(t, Root, realKey) != other {
		t.Fatalf("Recover during the run: %+v, %v", rec, err)
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
	rec, err := Recover(Root)
	if err != nil || len(rec.Restored) != 1 || rec.Restored[0] != (Restored{Setting{Key: realKey, Value: old}, cmd.Process.Pid}) || len(rec.SetAside) != 0 {
		t.Fatalf("Recover = %+v, %v; want %s=%s of pid %d", rec, err, realKey, old, cmd.Process.Pid)
	}
	if got := value(t, Root, realKey); got != old {
		t.Errorf("%s = %s after Recover, want %s", realKey, got, old)
	}
	if _, err := os.Stat(js[0]); !os.IsNotExist(err) {
		t.Errorf("journal %s left: %v", js[0], err)
	}
}

// TestRecoverUnrestorable: a journal whose value cannot be written back
// is set aside, saying exactly what to set by hand; the values it could
// put back are back, and the next Recover and Apply are not held up by
// it.
func TestRecoverUnrestorable(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.a": "1"})
	j, err := writeJournal(JournalDir(root), root, []Setting{{Key: "vm.a", Value: "0"}, {Key: "vm.gone", Value: "7"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j.release() // unlocked: the journal of a run that died
	rec, err := Recover(root)
	if err != nil || len(rec.Restored) != 1 || value(t, root, "vm.a") != "0" || len(rec.SetAside) != 1 {
		t.Fatalf("Recover = %+v, %v; want vm.a restored and the journal set aside for vm.gone", rec, err)
	}
	sa := rec.SetAside[0]
	var re *RestoreError
	if !errors.As(sa.Err, &re) || !strings.Contains(sa.Error(), "set it by hand: sysctl -w vm.gone=7") || !strings.Contains(sa.Error(), sa.Journal) {
		t.Errorf("set aside: %q; want what to run and where the journal is", sa.Error())
	}
	if js, _ := filepath.Glob(filepath.Join(JournalDir(root), journalPrefix+"*.json")); len(js) != 0 {
		t.Errorf("journals still replayed: %v", js)
	}
	if got := SetAsideJournals(root); len(got) != 1 || got[0] != sa.Journal {
		t.Errorf("SetAsideJournals = %v, want %s", got, sa.Journal)
	}
	if rec, err := Recover(root); err != nil || len(rec.Restored)+len(rec.SetAside) != 0 {
		t.Errorf("second Recover = %+v, %v; want nothing to do", rec, err)
	}
	a, err := Apply(root, []Setting{{Key: "vm.a", Value: "5"}})
	if err != nil {
		t.Fatalf("Apply after a journal was set aside: %v", err)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
}

// TestRecoverUnreadableJournal: a journal that does not parse is set
// aside, not an error that blocks every later run.
func TestRecoverUnreadableJournal(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.a": "1"})
	dir := JournalDir(root)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, journalPrefix+"4242-1.json")
	if err := os.WriteFile(bad, []byte(`{"root": "`), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(root)
	if err != nil || len(rec.SetAside) != 1 || rec.SetAside[0].PID != 4242 || !strings.Contains(rec.SetAside[0].Error(), "unreadable") {
		t.Fatalf("Recover = %+v, %v; want the journal of pid 4242 set aside as unreadable", rec, err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("journal %s still in place: %v", bad, err)
	}
}

// TestApplyRefusesKeyOfLiveRun: while another live run holds a key in its
// journal, Apply of that key is a *BusyError naming the run and writes
// nothing; another key is free. Once that run is gone, the key is free.
func TestApplyRefusesKeyOfLiveRun(t *testing.T) {
	root := fakeRoot(t, map[string]string{"vm.swappiness": "60", "kernel.timer_migration": "1"})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TAILGATE_SYSCTL_CHILD=10", "TAILGATE_SYSCTL_CHILD_ROOT="+root)
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
	_, err = Apply(root, []Setting{{Key: "vm/swappiness", Value: "20"}})
	var be *BusyError
	if !errors.As(err, &be) || be.PID != cmd.Process.Pid || !strings.Contains(err.Error(), "run one at a time") {
		t.Fatalf("Apply of a key another run holds = %v; want a *BusyError naming pid %d", err, cmd.Process.Pid)
	}
	if v := value(t, root, "vm.swappiness"); v != "10" {
		t.Errorf("vm.swappiness = %s, want the other run's 10 untouched", v)
	}
	a, err := Apply(root, []Setting{{Key: "kernel.timer_migration", Value: "0"}})
	if err != nil {
		t.Fatalf("Apply of another key: %v", err)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := Recover(root); err != nil {
		t.Fatal(err)
	}
	a, err = Apply(root, []Setting{{Key: "vm.swappiness", Value: "20"}})
	if err != nil {
		t.Fatalf("Apply once the other run died and was recovered: %v", err)
	}
	if err := a.Restore(); err != nil || value(t, root, "vm.swappiness") != "60" {
		t.Fatalf("Restore = %v, vm.swappiness = %s; want 60", err, value(t, root, "vm.swappiness"))
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
