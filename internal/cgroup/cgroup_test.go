package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needCgroup2 fails (never skips) without root or a cgroup v2 mount: the
// machines these tests run on have both.
func needCgroup2(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("needs root to make cgroups")
	}
	m, err := Mount()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// cgroupOf returns the cgroup v2 path of pid relative to the hierarchy's
// root, from /proc/PID/cgroup.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(ln, "0::"); ok {
			return p
		}
	}
	t.Fatalf("pid %d: no cgroup v2 line in %q", pid, b)
	return ""
}

// alive reports whether pid runs: a zombie, dead and waiting for its
// parent (init, for orphans) to reap it, does not.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func TestGroupLifecycle(t *testing.T) {
	mount := needCgroup2(t)
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if filepath.Dir(g.Path) != filepath.Join(mount, ParentName) {
		t.Errorf("group %s, want it under %s", g.Path, filepath.Join(mount, ParentName))
	}
	var st syscall.Stat_t
	if err := syscall.Stat(g.Path, &st); err != nil {
		t.Fatal(err)
	}
	if g.ID != st.Ino || g.ID == 0 {
		t.Errorf("id %d, want the directory's inode %d", g.ID, st.Ino)
	}
	if want := 2; g.Level != want {
		t.Errorf("level %d, want %d", g.Level, want)
	}
	byID, err := ByID(g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if byID.Path != g.Path || byID.Level != g.Level {
		t.Errorf("ByID(%d) = %+v, want %+v", g.ID, byID, g)
	}

	// A shell that forks two sleeps: all three are in the group.
	cmd := exec.Command("sh", "-c", "sleep 100 & sleep 100 & wait")
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	rel := strings.TrimPrefix(g.Path, mount)
	if got := cgroupOf(t, cmd.Process.Pid); got != rel {
		t.Errorf("the command runs in %s, want %s", got, rel)
	}
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 3 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if pids, err = g.Procs(); err != nil {
			t.Fatal(err)
		}
	}
	if len(pids) != 3 || !slices.Contains(pids, cmd.Process.Pid) {
		t.Fatalf("procs %v, want the shell %d and its two sleeps", pids, cmd.Process.Pid)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("the killed shell exited 0")
	}
	if p, err := g.Populated(); err != nil || p {
		t.Errorf("after Kill: populated %v, %v", p, err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive after Kill", pid)
		}
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("group %s still there: %v", g.Path, err)
	}
	left, err := OwnedBy(os.Getpid())
	if err != nil || len(left) > 0 {
		t.Errorf("groups of this process left: %v, %v", left, err)
	}
}

// A zombie (a child that exited and was not waited for yet) does not keep
// a group populated, nor from being removed.
func TestZombieDoesNotHoldGroup(t *testing.T) {
	needCgroup2(t)
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	cmd := exec.Command("true")
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := g.Populated()
		if err != nil {
			t.Fatal(err)
		}
		if !p {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("group still populated by an exited child")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// Without cgroup.kill (kernels before 5.14) every process is killed one
// by one, children forked meanwhile included.
func TestKillEach(t *testing.T) {
	needCgroup2(t)
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	// A fork loop: what is killed is replaced unless the group is frozen.
	cmd := exec.Command("sh", "-c", "while :; do sleep 100 & sleep 0.001; done")
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := g.killEach(time.Now().Add(KillTimeout)); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if p, _ := g.Populated(); p {
		t.Error("populated after killEach")
	}
}

func TestRemoveStale(t *testing.T) {
	mount := needCgroup2(t)
	// A process that has exited: its groups are stale.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(mount, ParentName)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	stalePath := filepath.Join(parent, owner{dead.Process.Pid, 1}.String()+"-1")
	if err := os.Mkdir(stalePath, 0o755); err != nil {
		t.Fatal(err)
	}
	stale, err := open(mount, stalePath)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Remove()
	orphan := exec.Command("sleep", "100")
	if err := stale.Start(orphan); err != nil {
		t.Fatal(err)
	}
	go orphan.Wait()
	live, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()

	removed, err := RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, stalePath) {
		t.Errorf("removed %v, want %s among them", removed, stalePath)
	}
	if slices.Contains(removed, live.Path) {
		t.Errorf("removed the live group %s", live.Path)
	}
	if _, err := os.Stat(stalePath); !os.IsNotExist(err) {
		t.Errorf("stale group still there: %v", err)
	}
	if _, err := os.Stat(live.Path); err != nil {
		t.Errorf("live group gone: %v", err)
	}
	if alive(orphan.Process.Pid) {
		t.Errorf("the stale group's process %d is alive", orphan.Process.Pid)
	}
}

func TestOpen(t *testing.T) {
	mount := needCgroup2(t)
	g, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	rel := strings.TrimPrefix(g.Path, mount)
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"absolute", g.Path, true},
		{"as in /proc/PID/cgroup", rel, true},
		{"root", mount, true},
		{"missing", g.Path + "-nope", false},
		{"not a cgroup", "/tmp", false},
		{"a file in a group", filepath.Join(g.Path, "cgroup.procs"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Open(tt.path)
			if !tt.ok {
				if err == nil {
					t.Errorf("Open(%q) = %+v, want an error", tt.path, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.path != mount && got.ID != g.ID {
				t.Errorf("Open(%q).ID = %d, want %d", tt.path, got.ID, g.ID)
			}
		})
	}
}

func TestParseOwner(t *testing.T) {
	tests := []struct {
		name string
		want owner
		ok   bool
	}{
		{"123.456-7", owner{123, 456}, true},
		{"123-7", owner{}, false},
		{"x.1-1", owner{}, false},
		{"0.1-1", owner{}, false},
		{"something-else", owner{}, false},
	}
	for _, tt := range tests {
		got, ok := parseOwner(tt.name)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseOwner(%q) = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("got %q", got)
	}
}
