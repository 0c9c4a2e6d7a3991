package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// stubResult makes every run return r without tracers, and counts the runs.
func stubResult(t *testing.T, r *result.Result) *int {
	t.Helper()
	calls := new(int)
	saved := runScenarios
	t.Cleanup(func() { runScenarios = saved })
	runScenarios = func(ctx context.Context, req runner.Request) (*result.Result, error) {
		*calls++
		return r, nil
	}
	return calls
}

// outputCommand is one command that writes a file where the user says.
type outputCommand struct {
	name string
	args func(out string) []string
	// valid checks what was written.
	valid func(b []byte) bool
}

func outputCommands(t *testing.T) []outputCommand {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	isResult := func(b []byte) bool { _, err := result.Parse(b); return err == nil }
	return []outputCommand{
		{"run -o", func(out string) []string { return []string{"run", "syscall-read", "-o", out} }, isResult},
		{"merge -o", func(out string) []string { return []string{"merge", base, "-o", out} }, isResult},
		{"compare --format json=PATH", func(out string) []string { return []string{"compare", base, same, "--format", "json=" + out} },
			func(b []byte) bool { return json.Valid(b) && strings.Contains(string(b), `"verdict"`) }},
	}
}

// TestOutputsNonRegular writes each command's output over the null device
// and symlinks: the device stays a device, a link stays a link and its
// target holds the output.
func TestOutputsNonRegular(t *testing.T) {
	stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.result())
	for _, c := range outputCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Run("null device", func(t *testing.T) {
				dev := filepath.Join(t.TempDir(), "null")
				if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
					t.Fatalf("mknod: %v", err)
				}
				if code, stdout, stderr := cli(c.args(dev)...); code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 || st.Mode()&fs.ModeDevice == 0 {
					t.Errorf("after the write: %v, %v; want the character device", st.Mode(), err)
				}
			})
			for _, existing := range []bool{true, false} {
				name := "symlink"
				if !existing {
					name = "dangling symlink"
				}
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					os.Mkdir(filepath.Join(dir, "real"), 0o755)
					target := filepath.Join(dir, "real", "out")
					if existing {
						os.WriteFile(target, []byte("old"), 0o644)
					}
					link := filepath.Join(dir, "link")
					if err := os.Symlink("real/out", link); err != nil {
						t.Fatal(err)
					}
					if code, stdout, stderr := cli(c.args(link)...); code != 0 {
						t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
					}
					if to, err := os.Readlink(link); err != nil || to != "real/out" {
						t.Errorf("the link is now %q, %v; want a link to real/out", to, err)
					}
					if b, err := os.ReadFile(target); err != nil || !c.valid(b) {
						t.Errorf("target: %v, holds %.200q", err, b)
					}
				})
			}
		})
	}
}

// TestOutputsDashIsStdout: -o - (and FORMAT=-) writes to standard output,
// and nothing else goes there.
func TestOutputsDashIsStdout(t *testing.T) {
	stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.result())
	t.Chdir(t.TempDir())
	for _, c := range outputCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(c.args("-")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if !c.valid([]byte(stdout)) {
				t.Errorf("stdout is not the output alone:\n%.300s", stdout)
			}
			if ents, _ := os.ReadDir("."); len(ents) != 0 {
				t.Errorf("files written: %v", ents)
			}
		})
	}
	if code, _, stderr := cli("compare", "a", "b", "--format", "json=-", "--format", "text"); code != 2 || !strings.Contains(stderr, "2 formats would go to stdout") {
		t.Errorf("json=- and text both to stdout: exit %d: %s", code, stderr)
	}
}

// TestOutputPathsCheckedFirst: an output that cannot be written is exit 2,
// in one line naming the path as given, before anything runs.
func TestOutputPathsCheckedFirst(t *testing.T) {
	calls := stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.result())
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	same := fakeRun{scenario: "syscall-read", scales: steady, seed: 2}.write(t, dir, "same.json")
	missing := filepath.Join(dir, "missing", "r.json")
	underFile := filepath.Join(base, "r.json")
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("nowhere/r.json", dangling)
	for _, c := range []struct {
		name string
		args []string
		path string // named in the error
		msg  string
	}{
		{"run -o missing dir", []string{"run", "syscall-read", "-o", missing}, missing, "does not exist"},
		{"run -o directory", []string{"run", "syscall-read", "-o", dir}, dir, "is a directory"},
		{"run -o under a file", []string{"run", "syscall-read", "-o", underFile}, underFile, "is not a directory"},
		{"run -o symlink loop", []string{"run", "syscall-read", "-o", loop}, loop, "too many levels of symbolic links"},
		{"run -o dangling symlink into a missing dir", []string{"run", "syscall-read", "-o", dangling}, dangling, "does not exist"},
		{"run -o a kernel file", []string{"run", "syscall-read", "-o", "/proc/version"}, "/proc/version", "is the kernel's proc file system"},
		{"run -o under /sys", []string{"run", "syscall-read", "-o", "/sys/kernel/r.json"}, "/sys/kernel/r.json", "is the kernel's sysfs file system"},
		{"merge -o missing dir", []string{"merge", base, "-o", missing}, missing, "does not exist"},
		{"merge -o directory", []string{"merge", base, "-o", dir}, dir, "is a directory"},
		{"compare --format missing dir", []string{"compare", base, same, "--format", "html=" + missing}, missing, "does not exist"},
		{"compare --output directory", []string{"compare", base, same, "--output", dir}, dir, "is a directory"},
		{"gate --format missing dir", []string{"gate", "syscall-read", "--baseline", dir, "--save-baseline", "--format", "json=" + missing}, missing, "does not exist"},
		{"two formats to one file", []string{"compare", base, same, "--format", "json=" + filepath.Join(dir, "r"), "--format", "markdown=" + filepath.Join(dir, "r")}, filepath.Join(dir, "r"), "would both be written to"},
		{"two formats to one file through a link", []string{"compare", base, same, "--format", "json=" + base, "--format", "markdown=" + filepath.Join(dir, "link-to-base")}, filepath.Join(dir, "link-to-base"), "would both be written to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Symlink("base.json", filepath.Join(dir, "link-to-base"))
			*calls = 0
			code, stdout, stderr := cli(c.args...)
			if code != exitUsage || *calls != 0 {
				t.Errorf("exit %d after %d runs, want %d before any\nstdout:\n%s\nstderr:\n%s", code, *calls, exitUsage, stdout, stderr)
			}
			if !strings.Contains(stderr, c.path) || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one line naming %s and saying %q, got:\n%s", c.path, c.msg, stderr)
			}
		})
	}
	// Files that are not regular may take several outputs.
	if code, stdout, stderr := cli("compare", base, same, "--format", "json=/dev/null", "--format", "markdown=/dev/null"); code != 0 {
		t.Errorf("two formats to /dev/null: exit %d\n%s%s", code, stdout, stderr)
	}
}

// refusedOutput runs each output command onto the path made by mk and
// wants exit 2 before any run, in one line naming the path and saying
// msg.
func refusedOutput(t *testing.T, mk func(t *testing.T) string, msg string) {
	t.Helper()
	calls := stubResult(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 3}.result())
	for _, c := range outputCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			path := mk(t)
			*calls = 0
			code, stdout, stderr := cli(c.args(path)...)
			if code != exitUsage || *calls != 0 {
				t.Errorf("exit %d after %d runs, want %d before any\nstdout:\n%s\nstderr:\n%s", code, *calls, exitUsage, stdout, stderr)
			}
			if !strings.Contains(stderr, path) || !strings.Contains(stderr, msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one line naming %s and saying %q, got:\n%s", path, msg, stderr)
			}
		})
	}
}

// TestOutputRefusesPlantedSymlink: a symlink another user planted in a
// sticky world-writable directory (as /tmp) is not followed, as
// fs.protected_symlinks would not follow it: root's 0600 file stays whole.
func TestOutputRefusesPlantedSymlink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	refusedOutput(t, func(t *testing.T) string {
		tmp := filepath.Join(t.TempDir(), "tmp")
		os.Mkdir(tmp, 0o755)
		if err := unix.Chmod(tmp, 0o1777); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(tmp, "r.json")
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return link
	}, "belongs to uid 65534")
	if b, err := os.ReadFile(victim); err != nil || string(b) != "secret" {
		t.Errorf("the link's target now holds %.100q, %v", b, err)
	}
}

// TestOutputRefusesBlockDevice: JSON is never written onto a disk.
func TestOutputRefusesBlockDevice(t *testing.T) {
	refusedOutput(t, func(t *testing.T) string {
		dev := filepath.Join(t.TempDir(), "loop")
		// A major number no driver has: a write that got through fails.
		if err := unix.Mknod(dev, unix.S_IFBLK|0o660, int(unix.Mkdev(240, 7))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
		return dev
	}, "is a device")
}

// TestOutputRefusesCharacterDevice: a character device other than
// /dev/null (a terminal, /dev/kmsg) is refused too.
func TestOutputRefusesCharacterDevice(t *testing.T) {
	refusedOutput(t, func(t *testing.T) string {
		dev := filepath.Join(t.TempDir(), "zero")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
		return dev
	}, "is a device")
}

// TestOutputRefusesFIFO: a FIFO with no reader is refused before the run,
// instead of hanging after it in an open(2) that no signal ends.
func TestOutputRefusesFIFO(t *testing.T) {
	refusedOutput(t, func(t *testing.T) string {
		fifo := filepath.Join(t.TempDir(), "pipe")
		if err := unix.Mkfifo(fifo, 0o666); err != nil {
			t.Fatal(err)
		}
		return fifo
	}, "is a FIFO")
}
