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
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestVariantUnwritableSysctlBeforeTrials: a read-only key of the real
// kernel, or a value it rejects, is exit 2 in one line naming key and
// value, before any trial of the base, for gate and matrix alike; the key
// keeps its value.
func TestVariantUnwritableSysctlBeforeTrials(t *testing.T) {
	testenv.Need(t, testenv.Sysctl("vm.swappiness"))
	swap, err := sysctl.Read(sysctl.Root, "vm.swappiness")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ variant, want string }{
		{"head:kernel.osrelease=6.6.6-pwned", "kernel.osrelease=6.6.6-pwned cannot be set: the key is read-only"},
		{"head:vm.swappiness=lots", "vm.swappiness=lots cannot be set on this kernel: invalid argument"},
		// Read-only, and the kernel changes them by itself: once, a
		// failed put-back of such a key left a journal that failed
		// every later run.
		{"x:fs.file-nr=1", "fs.file-nr=1 cannot be set: the key is read-only"},
		{"x:kernel.random.uuid=1", "kernel.random.uuid=1 cannot be set: the key is read-only"},
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
				noJournalLeft(t)
			})
		}
	}
	if v, _ := sysctl.Read(sysctl.Root, "vm.swappiness"); v != swap {
		t.Errorf("vm.swappiness = %s, was %s", v, swap)
	}
	// Nothing left behind blocks the next gate of another key.
	var f fakeExec
	if code, _, stderr := runGateWith(f.env(sysctl.Root), "syscall-read", "--variant", "a", "--variant", "b:vm.swappiness="+swap, "--trials", "2"); code != exitPass && code != exitRegression {
		t.Errorf("the next gate: exit %d\n%s", code, stderr)
	}
}

// startVariantRun starts bin on a matrix whose variant sets key to
// another value (want) and returns once a trial runs with it. It returns
// the value key had before, and puts it back at the end of the test if
// the test did not.
func startVariantRun(t *testing.T, bin, key string) (orig, want string, cmd *exec.Cmd) {
	t.Helper()
	testenv.Need(t, testenv.Sysctl(key))
	orig, err := sysctl.Read(sysctl.Root, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
			p, _ := sysctl.Path(sysctl.Root, key)
			os.WriteFile(p, []byte(orig), 0o644)
		}
	})
	want = "61"
	if orig == want {
		want = "59"
	}
	dir := t.TempDir()
	sc := filepath.Join(dir, "tick.yaml")
	if err := os.WriteFile(sc, []byte("name: tick\nworkload: {kind: timer, interval: 1ms}\ntrials: 3\nwarmup: 0s\nduration: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "matrix", sc, "--variant", "swap:"+key+"="+want, "--variant", "base")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "CI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The probe sets the value for a moment too, and under CI=1 the
		// first line naming tick is the first trial's end, after which
		// the base's trial puts the value back at once: a reading taken
		// between the two returned, and the kill found the value put
		// back. So the value must hold for 100 ms with no trial ending,
		// which only a trial of the variant (2 s) does.
		if v, _ := sysctl.Read(sysctl.Root, key); v == want && strings.Contains(stderr.String(), "tick") {
			ended := strings.Count(stderr.String(), "trial done")
			time.Sleep(100 * time.Millisecond)
			if v, _ := sysctl.Read(sysctl.Root, key); v == want && strings.Count(stderr.String(), "trial done") == ended {
				return orig, want, cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s in a trial\n%s", key, want, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// killedVariantRun leaves key changed as a tailgate run killed with
// SIGKILL in a variant's trial leaves it (startVariantRun, killed), and
// returns the value key had before.
func killedVariantRun(t *testing.T, bin, key string) (orig string) {
	t.Helper()
	orig, want, cmd := startVariantRun(t, bin, key)
	cmd.Process.Kill() // SIGKILL: no chance to restore
	cmd.Wait()
	if v, _ := sysctl.Read(sysctl.Root, key); v != want {
		t.Fatalf("%s = %s after SIGKILL, want it left at %s", key, v, want)
	}
	return orig
}

// TestConcurrentRunsOfOneKeyRefused: while a run holds a sysctl, a second
// gate whose variant writes the same key is refused in one line naming
// the run, before any trial, and the first run's value stays in force.
// Once, each saved whatever it found, and the second could put back the
// first run's value after the first had restored the machine's.
func TestConcurrentRunsOfOneKeyRefused(t *testing.T) {
	const key = "vm.swappiness"
	orig, want, first := startVariantRun(t, buildTailgate(t), key)
	var f fakeExec
	var out bytes.Buffer
	err := runGate(context.Background(), []string{"syscall-read", "--variant", "a", "--variant", "b:" + key + "=" + orig, "--trials", "2"}, &out, &out, f.env(sysctl.Root))
	code, stderr := exitCode(err), fmt.Sprint(err)
	pid := fmt.Sprintf("pid %d", first.Process.Pid)
	if code != exitInfra || !strings.Contains(stderr, key+" is set by another tailgate run ("+pid) || strings.Count(stderr, "\n") > 1 {
		t.Errorf("second gate: exit %d, stderr %q; want %d and one line naming the run of %s", code, stderr, exitInfra, pid)
	}
	if len(f.calls) > 0 {
		t.Errorf("trials ran before the refusal: %v", f.calls)
	}
	if v, _ := sysctl.Read(sysctl.Root, key); v != want {
		t.Errorf("%s = %s during the first run, want its %s", key, v, want)
	}
	first.Process.Signal(os.Interrupt)
	first.Wait()
	if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
		t.Errorf("%s = %s after the first run, want %s", key, v, orig)
	}
	noJournalLeft(t)
}

// TestJournalSetAsideBlocksNothing: a journal of a dead run that cannot
// be replayed (its key no longer there, its file unreadable) is named
// with what to do and set aside, and the gate runs; the next gate does
// not name it again.
func TestJournalSetAsideBlocksNothing(t *testing.T) {
	root := fakeSysctls(t)
	jdir := sysctl.JournalDir(root)
	if err := os.Mkdir(jdir, 0o700); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"root": %q, "pid": 4242, "settings": [{"Key": "fs.gone", "Value": "7"}]}`, root)
	if err := os.WriteFile(filepath.Join(jdir, "sysctl-4242-1.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jdir, "sysctl-4343-1.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	var f fakeExec
	code, _, stderr := runGateWith(f.env(root), "syscall-read", "--variant", "a", "--variant", "b:vm.swappiness=10", "--trials", "2")
	if code == exitUsage || code == exitInfra {
		t.Fatalf("gate beside journals that cannot be replayed: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"(pid 4242) could not be replayed", "sysctl -w fs.gone=7", "(pid 4343) could not be replayed: it is unreadable", "set aside as " + filepath.Join(jdir, "unrestored-sysctl-4242-1.json")} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = runGateWith(f.env(root), "syscall-read", "--variant", "a", "--variant", "b:vm.swappiness=10", "--trials", "2")
	if code == exitUsage || code == exitInfra || strings.Contains(stderr, "could not be replayed") {
		t.Errorf("the next gate: exit %d\n%s", code, stderr)
	}
}

// TestVariantSysctlRestoredAfterSIGKILL: tailgate matrix killed with
// SIGKILL while a variant's sysctl is in force leaves it changed; the next
// gate puts it back from the journal before it runs anything.
func TestVariantSysctlRestoredAfterSIGKILL(t *testing.T) {
	const key = "vm.swappiness"
	orig := killedVariantRun(t, buildTailgate(t), key)
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
	noJournalLeft(t)
}

// TestEveryCommandRecoversAfterSIGKILL: whatever command runs next on the
// machine after a variant's run was killed with SIGKILL (a plain run, a
// gate against a stored baseline, calibrate, doctor), it puts the sysctl
// back from the dead run's journal before it runs anything, and says so.
// Once, only a variant gate or a matrix did, and the others measured the
// changed machine without a word.
func TestEveryCommandRecoversAfterSIGKILL(t *testing.T) {
	const key = "vm.swappiness"
	bin := buildTailgate(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	sc := filepath.Join(dir, "tick.yaml")
	if err := os.WriteFile(sc, []byte("name: tick\nworkload: {kind: timer, interval: 1ms}\nwarmup: 0s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := []string{sc, "--trials", "2", "--duration", "100ms"}
	for _, tc := range []struct {
		name string
		args []string
		said string // on stdout or stderr
	}{
		{"run", append([]string{"run", "-o", os.DevNull}, short...), "restored sysctl " + key + "="},
		{"gate --baseline", append([]string{"gate", "--baseline", store, "--save-baseline"}, short...), "restored sysctl " + key + "="},
		{"calibrate", append([]string{"calibrate", "--runs", "2"}, short...), "restored sysctl " + key + "="},
		{"doctor", []string{"doctor"}, "restored " + key + "="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := killedVariantRun(t, bin, key)
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append(os.Environ(), "CI=1")
			out, err := cmd.CombinedOutput()
			if err != nil && !strings.Contains(tc.name, "doctor") {
				t.Fatalf("tailgate %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			}
			if v, _ := sysctl.Read(sysctl.Root, key); v != orig {
				t.Errorf("%s = %s after tailgate %s, want %s restored", key, v, tc.name, orig)
			}
			if !strings.Contains(string(out), tc.said) || !strings.Contains(string(out), "pid ") {
				t.Errorf("tailgate %s does not say it restored %s (and from which run):\n%s", tc.name, key, out)
			}
			noJournalLeft(t)
		})
	}
}
