package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// attacker is the uid of another user, as in /tmp: nobody.
const attacker = 65534

// stickyDir returns a root-owned directory of mode 01777, as /tmp is.
func stickyDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plant makes a symlink at link to target owned by uid, as that user would.
func plant(t *testing.T, target, link string, uid int) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// victim returns a root file of mode 0600 holding "secret".
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkIntact(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != "secret" {
		t.Errorf("%s now holds %q, %v; want it untouched", path, b, err)
	}
}

func TestWriteRefusesPlantedSymlink(t *testing.T) {
	v := victim(t)
	tmp := stickyDir(t)
	link := filepath.Join(tmp, "out.json")
	plant(t, v, link, attacker)
	err := Write(link, []byte("{}"), Options{})
	var le *LinkError
	if !errors.Is(err, ErrPlantedLink) || !errors.As(err, &le) || le.Link != link || le.Owner != attacker || le.Dir != tmp {
		t.Errorf("Write through a planted link = %v, want a LinkError for %s", err, link)
	}
	checkIntact(t, v)
}

// TestWriteRefusesPlantedDirectoryLink: a planted link as a directory on
// the way is refused as a last one is.
func TestWriteRefusesPlantedDirectoryLink(t *testing.T) {
	v := victim(t)
	tmp := stickyDir(t)
	plant(t, filepath.Dir(v), filepath.Join(tmp, "d"), attacker)
	if err := Write(filepath.Join(tmp, "d", "shadow"), []byte("{}"), Options{}); !errors.Is(err, ErrPlantedLink) {
		t.Errorf("Write through a planted directory link = %v, want ErrPlantedLink", err)
	}
	checkIntact(t, v)
}

// TestWriteFollowsTrustedLinks: the links the kernel follows are
// followed: the caller's own, the sticky directory's owner's, and any in
// a directory that is not sticky and world-writable.
// TestWriteFollowsTrustedLinks: a link that only root (the caller) could
// have placed is followed: root's, in a directory of root's that no one
// else can write, or that is sticky.
func TestWriteFollowsTrustedLinks(t *testing.T) {
	for _, c := range []struct {
		name    string
		dirMode uint32
	}{
		{"caller's link in a sticky directory", 0o1777},
		{"caller's link in its own directory", 0o755},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			os.Mkdir(dir, 0o755)
			unix.Chmod(dir, c.dirMode)
			target := filepath.Join(t.TempDir(), "r.json")
			link := filepath.Join(dir, "link")
			plant(t, target, link, 0)
			if err := Write(link, []byte("new"), Options{}); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
				t.Errorf("target holds %q, %v", b, err)
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link is no longer a link: %v", err)
			}
		})
	}
}

// TestWriteRefusesLinksOthersCouldPlace: root writes through no link
// that another user could have placed, anywhere on the path, sticky
// directory or not: a link of theirs, or any link in a directory they
// own or can write. Once, only a link in a sticky directory was refused,
// and root's merge -o into a user's own directory overwrote what the
// user's link named.
func TestWriteRefusesLinksOthersCouldPlace(t *testing.T) {
	for _, c := range []struct {
		name    string
		linkUID int
		dirUID  int
		dirMode uint32
		why     string
	}{
		{"a user's link in the user's own directory", attacker, attacker, 0o755, "it belongs to uid 65534"},
		{"the owner's link in a sticky directory of theirs", attacker, attacker, 0o1777, "it belongs to uid 65534"},
		{"a user's link in a directory that is not sticky", attacker, 0, 0o777, "it belongs to uid 65534"},
		{"a user's link in a directory only root writes", attacker, 0, 0o1755, "it belongs to uid 65534"},
		{"root's link in a user's directory", 0, attacker, 0o755, "belongs to uid 65534, who could have put it there"},
		{"root's link in a directory anyone writes", 0, 0, 0o777, "is writable by other users (mode 0777)"},
		{"root's link in a group-writable directory", 0, 0, 0o775, "is writable by other users (mode 0775)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := victim(t)
			dir := filepath.Join(t.TempDir(), "d")
			os.Mkdir(dir, 0o755)
			unix.Chmod(dir, c.dirMode)
			os.Chown(dir, c.dirUID, c.dirUID)
			for _, target := range []struct{ link, write string }{
				{v, "out.json"}, // the file itself
				{filepath.Dir(v), filepath.Join("out", "shadow")}, // a directory on the way
			} {
				link := filepath.Join(dir, strings.Split(target.write, "/")[0])
				os.Remove(link)
				plant(t, target.link, link, c.linkUID)
				err := Write(filepath.Join(dir, target.write), []byte("{}"), Options{})
				var le *LinkError
				if !errors.As(err, &le) || !errors.Is(err, ErrPlantedLink) || le.Link != link || !strings.Contains(err.Error(), c.why) {
					t.Errorf("Write through %s = %v; want a *LinkError saying %q", link, err, c.why)
				}
				if err := CheckWritable(filepath.Join(dir, target.write)); !errors.Is(err, ErrPlantedLink) && (err == nil || !strings.Contains(err.Error(), c.why)) {
					t.Errorf("CheckWritable through %s = %v; want it refused", link, err)
				}
				checkIntact(t, v)
			}
			if err := MkdirAll(filepath.Join(dir, "out", "sub"), 0o755); !errors.Is(err, ErrPlantedLink) {
				t.Errorf("MkdirAll through a link = %v, want ErrPlantedLink", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(v), "sub")); err == nil {
				t.Error("MkdirAll made a directory through the link")
			}
		})
	}
}

// TestMkdirAll: directories are made as os.MkdirAll makes them, also
// through a trusted link; a file on the way is ENOTDIR.
func TestMkdirAll(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	os.Symlink(real, filepath.Join(dir, "link"))
	if err := MkdirAll(filepath.Join(dir, "link", "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(real, "a", "b")); err != nil || !st.IsDir() {
		t.Errorf("a/b not made under the link's target: %v", err)
	}
	if err := MkdirAll(filepath.Join(dir, "link", "a", "b"), 0o755); err != nil {
		t.Errorf("MkdirAll of what is there: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	if err := MkdirAll(filepath.Join(dir, "file", "x"), 0o755); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("MkdirAll under a file = %v, want ENOTDIR", err)
	}
}

// TestWriteReplacesOthersFileWithOwn: a file another user owns, of mode
// 0666, is replaced by the caller's own of mode 0644: no longer theirs to
// edit. Once, it kept the old file's 0666.
func TestWriteReplacesOthersFileWithOwn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("theirs"), 0o666)
	os.Chmod(p, 0o666)
	os.Chown(p, attacker, attacker)
	if err := Write(p, []byte("mine"), Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Sys().(*syscall.Stat_t); int(s.Uid) != os.Geteuid() || st.Mode().Perm() != 0o644 {
		t.Errorf("replaced file: uid %d, mode %v; want uid %d, mode 0644", s.Uid, st.Mode().Perm(), os.Geteuid())
	}
}

func TestWriteRefusesDevices(t *testing.T) {
	for _, c := range []struct {
		name string
		mode uint32
		// A major number no driver has: had the write happened it would
		// have failed, not landed on a disk.
		dev uint64
	}{
		{"block device", unix.S_IFBLK, unix.Mkdev(240, 7)},
		{"character device", unix.S_IFCHR, unix.Mkdev(240, 7)},
		{"zero device", unix.S_IFCHR, unix.Mkdev(1, 5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := filepath.Join(t.TempDir(), "dev")
			if err := unix.Mknod(dev, c.mode|0o666, int(c.dev)); err != nil {
				t.Fatalf("mknod: %v", err)
			}
			if err := Write(dev, []byte("{}"), Options{}); !errors.Is(err, ErrDevice) {
				t.Errorf("Write(%s) = %v, want ErrDevice", c.name, err)
			}
			if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeDevice == 0 {
				t.Errorf("after the write: %v, %v; want the device", st.Mode(), err)
			}
		})
	}
	t.Run("null device", func(t *testing.T) {
		dev := filepath.Join(t.TempDir(), "null")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
		if err := Write(dev, []byte("{}"), Options{}); err != nil {
			t.Errorf("Write to the null device = %v, want nil", err)
		}
		if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("after the write: %v, %v; want the device", st.Mode(), err)
		}
	})
}

// TestWriteRefusesFIFO: a FIFO without a reader is refused at once, not
// waited on.
func TestWriteRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Write(fifo, []byte("{}"), Options{}) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFIFO) {
			t.Errorf("Write(FIFO) = %v, want ErrFIFO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Write(FIFO) still waits after 5s")
	}
	if _, err := OpenFile(fifo, os.O_RDWR|os.O_CREATE, 0o644); !errors.Is(err, ErrFIFO) {
		t.Errorf("OpenFile(FIFO) = %v, want ErrFIFO", err)
	}
}

// TestWriteNoFollowRefusesSymlink: in a store of tailgate's, a link is
// refused even when the caller made it.
func TestWriteNoFollowRefusesSymlink(t *testing.T) {
	v := victim(t)
	link := filepath.Join(t.TempDir(), "b.json")
	if err := os.Symlink(v, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("{}"), Options{NoFollow: true}); !errors.Is(err, ErrSymlink) {
		t.Errorf("Write NoFollow through a link = %v, want ErrSymlink", err)
	}
	checkIntact(t, v)
}

// TestOpenNoFollow: a link at the last element is not opened, a dangling
// one not created through, and a FIFO opens without a writer.
func TestOpenNoFollow(t *testing.T) {
	v := victim(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	os.Symlink(v, link)
	if f, err := OpenNoFollow(link, os.O_RDWR|os.O_TRUNC, 0); !errors.Is(err, ErrSymlink) {
		f.Close()
		t.Errorf("OpenNoFollow(link) = %v, want ErrSymlink", err)
	}
	checkIntact(t, v)
	made := filepath.Join(t.TempDir(), "made")
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(made, dangling)
	if f, err := OpenNoFollow(dangling, os.O_RDWR|os.O_CREATE, 0o600); !errors.Is(err, ErrSymlink) {
		f.Close()
		t.Errorf("OpenNoFollow(dangling link) = %v, want ErrSymlink", err)
	}
	if _, err := os.Lstat(made); err == nil {
		t.Errorf("%s was created through the link", made)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenNoFollow(fifo, os.O_RDONLY, 0)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("OpenNoFollow(FIFO) = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenNoFollow waits for a writer of a FIFO")
	}
	f, err := OpenNoFollow(v, os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("OpenNoFollow(file) = %v", err)
	}
	f.Close()
}

// TestOpenFileRefusesSymlink: a lock file that is a link is not opened,
// so not created or truncated where it points.
func TestOpenFileRefusesSymlink(t *testing.T) {
	v := victim(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, ".lock")
	os.Symlink(v, lock)
	if f, err := OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); !errors.Is(err, ErrSymlink) {
		f.Close()
		t.Errorf("OpenFile(link) = %v, want ErrSymlink", err)
	}
	checkIntact(t, v)
	dangling := filepath.Join(dir, ".dangling")
	made := filepath.Join(t.TempDir(), "made")
	os.Symlink(made, dangling)
	if f, err := OpenFile(dangling, os.O_RDWR|os.O_CREATE, 0o644); !errors.Is(err, ErrSymlink) {
		f.Close()
		t.Errorf("OpenFile(dangling link) = %v, want ErrSymlink", err)
	}
	if _, err := os.Lstat(made); err == nil {
		t.Errorf("%s was created through the link", made)
	}
}

// TestWriteReplacesAtomically: a regular file is replaced, keeps its
// permissions, and no temporary is left beside it.
func TestWriteReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, []byte("old"), 0o640)
	if err := Write(p, []byte("new"), Options{NoFollow: true}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("after the write: %q, mode %v, %v", b, st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %v, want r.json alone", ents)
	}
	if err := Write(dir, []byte("x"), Options{}); !errors.Is(err, unix.EISDIR) {
		t.Errorf("Write(directory) = %v, want EISDIR", err)
	}
}

func TestResolveLoop(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	os.Symlink("b", a)
	os.Symlink("a", filepath.Join(dir, "b"))
	if _, err := Resolve(a); !errors.Is(err, unix.ELOOP) {
		t.Errorf("Resolve(loop) = %v, want ELOOP", err)
	}
	got, err := Resolve(filepath.Join(dir, "missing", "x"))
	if err != nil || got != filepath.Join(dir, "missing", "x") {
		t.Errorf("Resolve(missing) = %q, %v", got, err)
	}
}
