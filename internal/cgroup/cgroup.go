// Package cgroup makes the cgroup v2 groups tailgate runs commands in,
// starts commands inside them, kills what they hold and removes them.
//
// Groups tailgate makes live under one parent, <mount>/tailgate/, and are
// named for the process that made them (its pid and start time), so that a
// later run can tell the groups of a dead tailgate from those of one still
// running and remove them (RemoveStale).
package cgroup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/childproc"
	"github.com/tailgate-ci/tailgate/internal/proc"
)

// ErrNoCgroup2 reports that no cgroup v2 hierarchy is mounted.
var ErrNoCgroup2 = errors.New("no cgroup v2 hierarchy mounted (mount -t cgroup2 none /sys/fs/cgroup)")

// ParentName is the directory under the cgroup v2 mount that holds the
// groups tailgate makes.
const ParentName = "tailgate"

// KillTimeout is how long Kill waits for the killed processes to be gone.
const KillTimeout = 10 * time.Second

// Group is a cgroup v2 group.
type Group struct {
	// Path is the group's directory.
	Path string
	// ID is the group's id: the inode number of its directory, which is
	// what bpf_get_current_cgroup_id reports for its tasks.
	ID uint64
	// Level is the group's depth below the root of the hierarchy as this
	// process sees it (the root is 0).
	Level int
}

// Mount returns where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup
// on a unified system, /sys/fs/cgroup/unified on a hybrid one.
func Mount() (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("find the cgroup v2 mount: %w", err)
	}
	var found []string
	for _, ln := range strings.Split(string(b), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(ln, " - ")
		if !ok {
			continue
		}
		f, p := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(p) < 1 || p[0] != "cgroup2" {
			continue
		}
		found = append(found, unescapeMount(f[4]))
	}
	for _, want := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		for _, m := range found {
			if m == want {
				return m, nil
			}
		}
	}
	if len(found) > 0 {
		return found[0], nil
	}
	return "", ErrNoCgroup2
}

// PathOf returns the directory of the cgroup v2 group process pid is in,
// from the "0::" line of /proc/PID/cgroup, under the hierarchy's mount.
func PathOf(pid int) (string, error) {
	mount, err := Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup of process %d: %w", pid, err)
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(ln, "0::"); ok {
			return filepath.Join(mount, rel), nil
		}
	}
	return "", fmt.Errorf("cgroup of process %d: %w", pid, ErrNoCgroup2)
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Open returns the existing group at path: a directory of the cgroup v2
// hierarchy, given by its path (/sys/fs/cgroup/system.slice/x.service) or
// relative to the hierarchy's root as /proc/PID/cgroup writes it
// (/system.slice/x.service).
func Open(path string) (*Group, error) {
	mount, err := Mount()
	if err != nil {
		return nil, err
	}
	candidates := []string{path}
	if !strings.HasPrefix(filepath.Clean(path), mount+"/") && filepath.Clean(path) != mount {
		candidates = append(candidates, filepath.Join(mount, path))
	}
	var firstErr error
	for _, c := range candidates {
		g, err := open(mount, c)
		if err == nil {
			return g, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func open(mount, path string) (*Group, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(abs, &sfs); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", path, err)
	}
	if sfs.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("cgroup %s: not in the cgroup v2 hierarchy (mounted at %s)", path, mount)
	}
	var st unix.Stat_t
	if err := unix.Stat(abs, &st); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("cgroup %s: not a directory", path)
	}
	rel, err := filepath.Rel(mount, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("cgroup %s: not under the cgroup v2 mount %s", path, mount)
	}
	return &Group{Path: abs, ID: st.Ino, Level: level(rel)}, nil
}

func level(rel string) int {
	if rel == "." || rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// fileIDKernfs is the handle type of kernfs (FILEID_KERNFS): an 8-byte
// handle that is the node's id, as cgroup ids are.
const fileIDKernfs = 0xfe

// ByID returns the group whose id is id, found through the kernel
// (open_by_handle_at on the hierarchy), not by walking it.
func ByID(id uint64) (*Group, error) {
	mount, err := Mount()
	if err != nil {
		return nil, err
	}
	mfd, err := unix.Open(mount, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", mount, err)
	}
	defer unix.Close(mfd)
	h := make([]byte, 8)
	binary.NativeEndian.PutUint64(h, id)
	fd, err := unix.OpenByHandleAt(mfd, unix.NewFileHandle(fileIDKernfs, h), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("cgroup id %d: %w", id, err)
	}
	defer unix.Close(fd)
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil, fmt.Errorf("cgroup id %d: %w", id, err)
	}
	return open(mount, path)
}

// seq numbers the groups this process makes.
var seq atomic.Uint64

// New makes a fresh, empty group under the tailgate parent, named for this
// process. The caller removes it (Remove) on every path.
func New() (*Group, error) {
	mount, err := Mount()
	if err != nil {
		return nil, err
	}
	owner, err := selfOwner()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(mount, ParentName)
	path := filepath.Join(parent, fmt.Sprintf("%s-%d", owner, seq.Add(1)))
	// Another tailgate may remove the empty parent between the two mkdirs.
	for try := 0; ; try++ {
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("make cgroup %s: %w", parent, err)
		}
		err := os.Mkdir(path, 0o755)
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrNotExist) && try < 3 {
			continue
		}
		return nil, fmt.Errorf("make cgroup %s: %w", path, err)
	}
	g, err := open(mount, path)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	startGuard(guardPrefix(parent, owner))
	return g, nil
}

// owner names a process so that a later one can tell whether it still
// runs: its pid and its start time in clock ticks since boot, which a
// reused pid does not share.
type owner struct {
	pid   int
	start uint64
}

func (o owner) String() string { return fmt.Sprintf("%d.%d", o.pid, o.start) }

func selfOwner() (owner, error) {
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return owner{}, fmt.Errorf("read this process's start time: %w", err)
	}
	return owner{pid, start}, nil
}

// startTime returns when process pid started (proc.Stat.StartTime).
func startTime(pid int) (uint64, error) {
	st, err := proc.ReadStat(pid)
	return st.StartTime, err
}

// parseOwner reads the owner from a group name "PID.START-SEQ".
func parseOwner(name string) (owner, bool) {
	o, _, ok := strings.Cut(name, "-")
	if !ok {
		return owner{}, false
	}
	p, s, ok := strings.Cut(o, ".")
	if !ok {
		return owner{}, false
	}
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return owner{}, false
	}
	return owner{pid, start}, true
}

func (o owner) alive() bool {
	start, err := startTime(o.pid)
	return err == nil && start == o.start
}

// Start starts cmd inside g: the child is created in the group
// (clone3 with CLONE_INTO_CGROUP), so that nothing it does, not even what
// it forks before it execs, happens outside the group.
func (g *Group) Start(cmd *exec.Cmd) error {
	dir, err := os.Open(g.Path)
	if err != nil {
		return fmt.Errorf("open cgroup: %w", err)
	}
	defer dir.Close()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(dir.Fd())
	// Killed with this process, by the kernel; what it forked, by the
	// guard (startGuard).
	return childproc.Start(cmd)
}

// Procs returns the pids of the processes in g itself (not in groups
// below it).
func (g *Group) Procs() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(g.Path, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Populated reports whether a process is alive in g or a group below it.
func (g *Group) Populated() (bool, error) {
	f, err := os.Open(filepath.Join(g.Path, "cgroup.events"))
	if err != nil {
		return false, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "populated "); ok {
			return v != "0", nil
		}
	}
	return false, fmt.Errorf("%s/cgroup.events: no populated line", g.Path)
}

// Kill kills every process in g and the groups below it and waits, up to
// KillTimeout, until none is left. It writes cgroup.kill where the kernel
// has it (5.14); elsewhere it freezes the group, so that nothing forks
// while it is killed, and sends SIGKILL to each process until none is
// left.
func (g *Group) Kill() error {
	deadline := time.Now().Add(KillTimeout)
	if populated, err := g.Populated(); err == nil && !populated {
		return nil
	}
	if err := os.WriteFile(filepath.Join(g.Path, "cgroup.kill"), []byte("1"), 0); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("kill cgroup %s: %w", g.Path, err)
		}
		return g.killEach(deadline)
	}
	return g.waitEmpty(deadline)
}

// killEach is Kill without cgroup.kill.
func (g *Group) killEach(deadline time.Time) error {
	// A frozen task still dies of SIGKILL, and forks nothing meanwhile.
	_ = os.WriteFile(filepath.Join(g.Path, "cgroup.freeze"), []byte("1"), 0)
	for {
		var pids []int
		err := filepath.WalkDir(g.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			sub := &Group{Path: p}
			ps, err := sub.Procs()
			pids = append(pids, ps...)
			return err
		})
		if err != nil {
			return fmt.Errorf("kill cgroup %s: %w", g.Path, err)
		}
		if len(pids) == 0 {
			return g.waitEmpty(deadline)
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL) // ESRCH: gone already
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill cgroup %s: %d processes still there after %v (pids %v)", g.Path, len(pids), KillTimeout, pids)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitEmpty waits until nothing is alive in g, polling cgroup.events.
func (g *Group) waitEmpty(deadline time.Time) error {
	for {
		populated, err := g.Populated()
		if err != nil {
			return fmt.Errorf("cgroup %s: %w", g.Path, err)
		}
		if !populated {
			return nil
		}
		if time.Now().After(deadline) {
			pids, _ := g.Procs()
			return fmt.Errorf("cgroup %s: processes still alive %v after being killed (pids %v)", g.Path, KillTimeout, pids)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Remove kills what is left in g and removes it, the groups below it
// first, and then the tailgate parent if that is empty now.
func (g *Group) Remove() error {
	if _, err := os.Stat(g.Path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := g.Kill(); err != nil {
		return err
	}
	if err := removeTree(g.Path); err != nil {
		return err
	}
	removeParent(filepath.Dir(g.Path))
	return nil
}

// removeTree removes the group directory p and the groups below it,
// deepest first. A group whose last task has exited may stay busy for a
// moment while the kernel finishes with it.
func removeTree(p string) error {
	entries, err := os.ReadDir(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove cgroup %s: %w", p, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeTree(filepath.Join(p, e.Name())); err != nil {
				return err
			}
		}
	}
	deadline := time.Now().Add(KillTimeout)
	for {
		err := unix.Rmdir(p)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", p, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// removeParent removes the tailgate parent group if no group is left in
// it; another tailgate's group keeps it (EBUSY).
func removeParent(parent string) {
	if filepath.Base(parent) == ParentName {
		_ = unix.Rmdir(parent)
	}
}

// RemoveStale kills and removes the groups under the tailgate parent
// whose owner no longer runs: what a tailgate that was killed outright
// (SIGKILL, a crash) left behind. Groups of live tailgate processes are
// left alone. It returns the paths removed.
func RemoveStale() ([]string, error) {
	mount, err := Mount()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(mount, ParentName)
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		o, ok := parseOwner(e.Name())
		if !ok || o.alive() {
			continue
		}
		g := &Group{Path: filepath.Join(parent, e.Name())}
		if err := g.Kill(); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := removeTree(g.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, g.Path)
	}
	removeParent(parent)
	return removed, errors.Join(errs...)
}

// Owned returns the groups under the tailgate parent, for checks that
// none is left behind.
func Owned() ([]string, error) {
	mount, err := Mount()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(mount, ParentName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(mount, ParentName, e.Name()))
		}
	}
	return out, nil
}

// OwnedBy returns the groups under the tailgate parent made by process pid.
func OwnedBy(pid int) ([]string, error) {
	all, err := Owned()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range all {
		if o, ok := parseOwner(filepath.Base(p)); ok && o.pid == pid {
			out = append(out, p)
		}
	}
	return out, nil
}
