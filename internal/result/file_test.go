package result

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestWriteFileAtomicNonRegular writes over what is not a regular file: the
// null device and a socket are written in place and stay what they were, a
// FIFO is refused, a symlink stays a link and its target is replaced.
func TestWriteFileAtomicNonRegular(t *testing.T) {
	msg := []byte("new\n")
	t.Run("character device", func(t *testing.T) {
		testenv.Need(t, testenv.Root) // mknod
		dev := filepath.Join(t.TempDir(), "null")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
		if err := WriteFileAtomic(dev, msg); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("after the write: %v, %v; want a character device", st.Mode(), err)
		}
		onlyEntry(t, filepath.Dir(dev))
	})
	t.Run("fifo", func(t *testing.T) {
		// Refused, not waited on: its open(2) would wait for a reader.
		fifo := filepath.Join(t.TempDir(), "pipe")
		if err := unix.Mkfifo(fifo, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(fifo, msg); !errors.Is(err, safefile.ErrFIFO) {
			t.Errorf("err %v, want safefile.ErrFIFO", err)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("after the write: %v, %v; want a FIFO", st.Mode(), err)
		}
	})
	t.Run("socket", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		got := make(chan string, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			got <- string(b)
		}()
		if err := WriteFileAtomic(sock, msg); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(sock); err != nil || st.Mode()&fs.ModeSocket == 0 {
			t.Fatalf("after the write: %v, %v; want a socket", st.Mode(), err)
		}
		if s := <-got; s != string(msg) {
			t.Errorf("listener got %q, want %q", s, msg)
		}
	})
	for _, tt := range []struct {
		name     string
		existing bool
		chain    bool
	}{
		{"symlink", true, false},
		{"dangling symlink", false, false},
		{"symlink to a symlink", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "store"), 0o755)
			target := filepath.Join(dir, "store", "r.json")
			if tt.existing {
				if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "link.json")
			to := "store/r.json"
			if tt.chain {
				os.Symlink("r.json", filepath.Join(dir, "store", "mid.json"))
				to = "store/mid.json"
			}
			if err := os.Symlink(to, link); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(link, msg); err != nil {
				t.Fatal(err)
			}
			if got, err := os.Readlink(link); err != nil || got != to {
				t.Errorf("link now %q, %v; want a link to %q", got, err, to)
			}
			st, err := os.Lstat(target)
			if err != nil || !st.Mode().IsRegular() {
				t.Fatalf("target: %v, %v", st, err)
			}
			if b, _ := os.ReadFile(target); string(b) != string(msg) {
				t.Errorf("target holds %q, want %q", b, msg)
			}
			if tt.existing && st.Mode().Perm() != 0o600 {
				t.Errorf("target mode %v, want its old 0600", st.Mode().Perm())
			}
		})
	}
	t.Run("symlink loop", func(t *testing.T) {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.Symlink("b", a)
		os.Symlink("a", b)
		if err := WriteFileAtomic(a, msg); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("err %v, want ELOOP", err)
		}
		if st, err := os.Lstat(a); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the loop's link was replaced: %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := WriteFileAtomic(dir, msg); !errors.Is(err, syscall.EISDIR) {
			t.Errorf("err %v, want EISDIR", err)
		}
	})
}

// onlyEntry fails when dir holds more than one entry: a temporary left
// behind.
func onlyEntry(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%s holds %d entries, want 1: %v", dir, len(ents), ents)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead, alive := deadPID(t), os.Getpid()
	old, older := time.Now().Add(-2*time.Minute), time.Now().Add(-2*time.Hour)
	files := []struct {
		name  string
		mtime time.Time
		stale bool
	}{
		{fmt.Sprintf(".r.json.tmp-%d-123", dead), old, true},
		{fmt.Sprintf(".r.json.tmp-%d-124", dead), time.Now(), false}, // perhaps a pid of another namespace: wait
		{fmt.Sprintf(".r.json.tmp-%d-125", alive), older, false},
		{".r.json.tmp4242", older, true}, // the form without a pid
		{".r.json.tmp4243", old, false},
		{"r.json", older, false},
		{".r.json.tmp-x-1", older, false}, // not ours
		{".notes", older, false},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, f.mtime, f.mtime)
	}
	removed, err := RemoveStaleTemps(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if f.stale {
			want = append(want, filepath.Join(dir, f.name))
			if err == nil {
				t.Errorf("%s is stale and was kept", f.name)
			}
		} else if err != nil {
			t.Errorf("%s was removed: it is not a stale temporary", f.name)
		}
	}
	slices.Sort(removed)
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
}

// TestWriteFileAtomicTempName: the temporary is hidden, names its writer's
// pid and is recognized as a temporary.
func TestWriteFileAtomicTempName(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, tempPattern("r.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	name := filepath.Base(f.Name())
	pid, ok := parseTemp(name)
	if !ok || pid != os.Getpid() || !strings.HasPrefix(name, ".r.json.tmp-") {
		t.Errorf("temporary %s: pid %d, ok %v; want a hidden .r.json.tmp-%d-RANDOM", name, pid, ok, os.Getpid())
	}
	if !IsTemp(name) || IsTemp("r.json") || IsTemp(".tailgate.lock") {
		t.Error("IsTemp does not tell temporaries from other files")
	}
}
