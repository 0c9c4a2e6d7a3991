package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
)

// The groups a process makes hold what it started (an exec workload's
// command, and what that forked). Killed outright (SIGKILL, or the
// parent-death signal of a worker whose tailgate was), the process
// cannot kill them, and they ran on until the next run removed them
// (RemoveStale). A guard outlives it instead: a shell started once per
// process in a session of its own, holding the read end of a pipe whose
// write end only this process has (close-on-exec: no child inherits it).
// When this process is gone, however it went, the read sees end of file
// and the guard kills every group named for it (cgroup.kill, which kills
// what is below too), then removes them.

// guardScript is the guard: $1 is the groups' common prefix,
// <mount>/tailgate/PID.START.
const guardScript = `while read -r _; do :; done
for g in "$1"-*; do
	[ -d "$g" ] || continue
	echo 1 > "$g/cgroup.kill" 2>/dev/null
	find "$g" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
done
i=0
while [ $i -lt 100 ]; do
	left=
	for g in "$1"-*; do
		[ -d "$g" ] || continue
		find "$g" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$g" ] && left=1
	done
	[ -z "$left" ] && break
	sleep 0.1
	i=$((i + 1))
done
rmdir "${1%/*}" 2>/dev/null
exit 0
`

var (
	guardOnce sync.Once
	// guardPipe is the write end the guard waits on; never closed, so
	// that it closes only with this process.
	guardPipe *os.File
)

// startGuard starts this process's guard (once) for the groups named
// prefix-SEQ. It is best effort: without /bin/sh, the next run's
// RemoveStale still removes what a killed process left.
func startGuard(prefix string) {
	guardOnce.Do(func() {
		r, w, err := os.Pipe()
		if err != nil {
			return
		}
		defer r.Close()
		cmd := exec.Command("/bin/sh", "-c", guardScript, "tailgate-cgroup-guard", prefix)
		cmd.Stdin = r
		cmd.Dir = "/"
		// Not in this process's group: ^C at a terminal, or a signal to
		// the group, would end the guard with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			w.Close()
			return
		}
		guardPipe = w
		go cmd.Wait() // reaped if it ends first
	})
}

// guardPrefix is the prefix of the groups owner o makes under parent.
func guardPrefix(parent string, o owner) string {
	return filepath.Join(parent, o.String())
}
