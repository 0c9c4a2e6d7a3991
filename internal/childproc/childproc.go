// Package childproc starts the processes tailgate owns so that they do not
// outlive it: a child that dies with its parent, and a process group that
// an interrupt ends whole.
package childproc

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Start starts cmd so that the kernel kills it (SIGKILL) when this process
// dies, however it dies: SIGKILL included, which no handler of tailgate's
// sees.
//
// The kernel ties PR_SET_PDEATHSIG to the thread that forked the child,
// not to the process (prctl(2)): the child is killed when that thread
// exits, and Go ends a thread when a goroutine locked to it returns. So
// the fork happens on a thread locked for the purpose, and kept locked,
// blocked in waitid(WNOWAIT), until the child has exited: no goroutine
// can end it meanwhile. The caller waits for cmd as usual (cmd.Wait).
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		waitExited(cmd.Process.Pid)
	}()
	return <-started
}

// waitExited blocks until process pid (a child) has exited, leaving it
// for cmd.Wait to reap.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return // exited, or reaped already (ECHILD)
		}
	}
}

// Group makes cmd the leader of a process group of its own, and a
// cancelled context (exec.CommandContext) end the whole group: sig to
// every process of it (a build's make and its compilers, not only the
// shell that started them), then SIGKILL to what is left after grace.
// cmd.Wait returns at most grace after the cancel.
func Group(cmd *exec.Cmd, sig syscall.Signal, grace time.Duration) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		err := syscall.Kill(-pgid, sig)
		time.AfterFunc(grace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return err
	}
	cmd.WaitDelay = grace
}
