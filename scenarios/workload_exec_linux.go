//go:build linux && amd64

package scenarios

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/loadfile"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

// execLoad is the exec kind, prepared: the groups made, the programs
// found.
type execLoad struct {
	e     *Exec
	ops   *regexp.Regexp // nil without ops
	env   []string
	group *cgroup.Group // command's: what the tracers count
	loadG *cgroup.Group // load's; nil without load
	// started is set once setup has run: teardown is due at close.
	started bool
	cmd     *child // command while it runs
	runs    int    // programs started, naming the group of each
}

// stopWait bounds how long a killed process's output takes to drain once
// its group is empty.
const stopWait = 2 * time.Second

func newExecKind(w Workload, _ int) (kindLoad, error) {
	e, ok := w.Params.(*Exec)
	if !ok {
		return nil, errors.New("exec workload without its parameters")
	}
	l := &execLoad{e: e}
	if e.Ops != "" {
		l.ops = regexp.MustCompile(e.Ops) // checked
	}
	env := os.Environ()
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		env = append(env, k+"="+e.Env[k])
	}
	l.env = env
	if e.Dir != "" {
		if st, err := os.Stat(e.Dir); err != nil {
			return nil, fmt.Errorf("exec workload: dir: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("exec workload: dir %s is not a directory", e.Dir)
		}
	}
	for _, c := range []struct {
		what string
		argv []string
	}{{"command", e.Command}, {"load", e.Load}, {"setup", e.Setup}, {"teardown", e.Teardown}} {
		if len(c.argv) > 0 {
			if err := l.findProgram(c.what, c.argv[0]); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if l.group, err = cgroup.New(); err != nil {
		return nil, fmt.Errorf("exec workload: %w", err)
	}
	if len(e.Load) > 0 {
		if l.loadG, err = cgroup.New(); err != nil {
			l.group.Remove()
			return nil, fmt.Errorf("exec workload: %w", err)
		}
	}
	return l, nil
}

// findProgram checks that a program exists before anything runs: a name
// is looked up in PATH, a path is taken relative to the dir.
func (l *execLoad) findProgram(what, prog string) error {
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("exec workload: %s: program %q not found in PATH", what, prog)
		}
		return nil
	}
	p := prog
	if !filepath.IsAbs(p) && l.e.Dir != "" {
		p = filepath.Join(l.e.Dir, p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("exec workload: %s: program %s: %w", what, prog, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("exec workload: %s: program %s is not executable", what, p)
	}
	return nil
}

func (l *execLoad) threads() int { return 0 }

func (l *execLoad) tasks() Tasks {
	return Tasks{CgroupID: l.group.ID, Cgroup: l.group.Path}
}

// start runs setup the first time. With a ready check or a load, it then
// starts command unless it runs already (it keeps running between the
// runs of a load) and waits until it is ready: what command does until
// then is not measured. Without either, command's start is part of what
// is measured, and run starts it.
func (l *execLoad) start(ctx context.Context) error {
	if err := l.setup(ctx); err != nil {
		return err
	}
	if l.e.Ready == nil && !l.e.hasLoad() {
		return nil
	}
	return l.startCommand(ctx)
}

func (l *execLoad) setup(ctx context.Context) error {
	if !l.started {
		if len(l.e.Setup) > 0 {
			if err := l.hook(ctx, "setup", l.e.Setup); err != nil {
				return err
			}
		}
		l.started = true
	}
	return nil
}

// startCommand starts command unless it runs, and waits until it is
// ready.
func (l *execLoad) startCommand(ctx context.Context) error {
	if l.cmd != nil {
		select {
		case <-l.cmd.exited:
			if err := l.cmd.failed(); err != nil {
				l.stopCommand()
				return err
			}
			if populated, err := l.group.Populated(); err != nil || !populated {
				l.stopCommand()
				return fmt.Errorf("command %s exited between runs", quoteArgv(l.e.Command))
			}
		default:
		}
		return nil
	}
	// Whatever an earlier run left behind does not belong to this one.
	if err := l.group.Kill(); err != nil {
		return err
	}
	var out stdoutUse
	if !l.e.hasLoad() && l.ops != nil {
		out = countOps
	}
	c, err := l.startChild(l.group, "command", l.e.Command, out)
	if err != nil {
		return err
	}
	l.cmd = c
	if l.e.Ready != nil {
		if err := l.waitReady(ctx, c); err != nil {
			l.stopCommand()
			return err
		}
	}
	return nil
}

// waitReady waits until command's port accepts or its file exists.
func (l *execLoad) waitReady(ctx context.Context, c *child) error {
	r := l.e.Ready
	addr := ""
	if r.Port != "" {
		addr, _ = readyAddr(r.Port) // checked
	}
	file := r.File
	if file != "" && !filepath.IsAbs(file) && l.e.Dir != "" {
		file = filepath.Join(l.e.Dir, file)
	}
	deadline := time.Now().Add(r.Timeout)
	for {
		if addr != "" {
			if conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
				conn.Close()
				return nil
			}
		} else if _, err := os.Stat(file); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.exited:
			if err := c.failed(); err != nil {
				return err
			}
			if populated, _ := l.group.Populated(); !populated {
				return fmt.Errorf("command %s exited before it was ready%s", quoteArgv(c.argv), c.stderrTail())
			}
		default:
		}
		if time.Now().After(deadline) {
			what := "nothing accepts on " + addr
			if addr == "" {
				what = file + " does not exist"
			}
			return fmt.Errorf("command %s not ready after %v: %s%s", quoteArgv(c.argv), r.Timeout, what, c.stderrTail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *execLoad) run(ctx context.Context) (Stats, error) {
	if err := l.setup(ctx); err != nil {
		return Stats{Syscalls: map[string]uint64{}}, err
	}
	// A command that runs already is started (Start); one a load talks to
	// must still be alive.
	started := false
	if l.cmd == nil || l.e.hasLoad() {
		started = l.cmd == nil
		if err := l.startCommand(ctx); err != nil {
			return Stats{Syscalls: map[string]uint64{}}, err
		}
	}
	if l.e.Builtin != nil {
		return l.runBuiltin(ctx)
	}
	if len(l.e.Load) > 0 {
		return l.runLoad(ctx)
	}
	return l.runCommand(ctx, started)
}

// runCommand waits until every process of the group has exited or ctx is
// done, then kills what is left. With ops, ops count from the command's
// start when this run started it (its first lines may be counted
// already), else from now; without, the op is the run: 1 when command
// and all it started ended by themselves, 0 when the run's end cut them.
func (l *execLoad) runCommand(ctx context.Context, started bool) (Stats, error) {
	c := l.cmd
	var base uint64
	if !started {
		base = c.ops.Load()
	}
	var failure error
	ended := false
	select {
	case <-ctx.Done():
	case <-c.exited:
		if failure = c.failed(); failure == nil {
			// command is done; what it started may not be.
			ended = l.waitEmpty(ctx)
		}
	}
	if failure == nil {
		failure = c.lateFailure()
	}
	err := l.stopCommand()
	return l.runStats(c.ops.Load()-base, ended, failure, err)
}

// runStats is what a run returns: ops counted, or without ops the run as
// one op when what it ran ended by itself; failure rather than the error
// of stopping.
func (l *execLoad) runStats(ops uint64, ended bool, failure, stopErr error) (Stats, error) {
	st := Stats{Ops: ops, Syscalls: map[string]uint64{}}
	if l.ops == nil {
		st.Ops = 0
		if ended {
			st.Ops = 1
		}
	}
	if failure != nil {
		return st, failure
	}
	return st, stopErr
}

// waitEmpty waits until nothing is alive in command's group or ctx is
// done, and reports whether the group emptied.
func (l *execLoad) waitEmpty(ctx context.Context) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if populated, err := l.group.Populated(); err != nil || !populated {
			return err == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// runLoad runs load against command until load exits or ctx is done.
// Without ops, the op is load's run: 1 when load ended by itself.
func (l *execLoad) runLoad(ctx context.Context) (Stats, error) {
	st := Stats{Syscalls: map[string]uint64{}}
	if err := l.loadG.Kill(); err != nil {
		return st, err
	}
	out, err := l.loadStdout()
	if err != nil {
		return st, err
	}
	lc, err := l.startChild(l.loadG, "load", l.e.Load, out)
	if err != nil {
		return st, err
	}
	var failure error
	ended := false
	cmdExited := l.cmd.exited
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-lc.exited:
			failure = lc.failed()
			ended = failure == nil
			break wait
		case <-cmdExited:
			// A command that forks a daemon and exits 0 is not a failure:
			// the daemon is what load talks to.
			if failure = l.cmd.failed(); failure != nil {
				break wait
			}
			cmdExited = nil
		}
	}
	if failure == nil {
		failure = lc.lateFailure()
	}
	if !ended && failure == nil && l.e.Latencies != nil {
		lc.interrupt()
	}
	kerr := lc.stop(l.loadG)
	st, err = l.runStats(lc.ops.Load(), ended, failure, kerr)
	if err != nil || l.e.Latencies == nil {
		return st, err
	}
	return l.readLatencies(lc, ended, st)
}

// loadStdout says what to do with load's stdout, and removes the file of
// an earlier run's latencies: they must not stand for this run's.
func (l *execLoad) loadStdout() (stdoutUse, error) {
	var out stdoutUse
	if l.ops != nil {
		out |= countOps
	}
	if o := l.e.Latencies; o != nil {
		if o.File == "" {
			out |= keepStdout
		} else if err := os.Remove(l.path(o.File)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("latencies: %w", err)
		}
	}
	return out, nil
}

// readLatencies adds to st the latencies load's output holds, as
// request.client; without ops, the requests answered are the ops. A run
// its end cut (the warmup's, or a trial's whose load outlasts it) may
// have none: load was interrupted (SIGINT) so that the generators that
// write their results then (hey, vegeta, ghz) do, and if they did not,
// the run measured none and the runner says so for a trial.
func (l *execLoad) readLatencies(lc *child, ended bool, st Stats) (Stats, error) {
	o := l.e.Latencies
	var lat loadfile.Latencies
	var err error
	if o.File == "" {
		b, over := lc.stdout.bytes()
		if over {
			return st, fmt.Errorf("latencies: load's stdout is over %d bytes; write them to a file (latencies: {file: PATH})", loadfile.MaxSize)
		}
		lat, err = loadfile.Parse(o.Format, "load's stdout", b, o.options())
	} else {
		lat, err = loadfile.Load(o.Format, l.path(o.File), o.options())
	}
	switch {
	case err != nil && !ended:
		return st, nil
	case err != nil:
		return st, fmt.Errorf("latencies of load %s: %w", quoteArgv(l.e.Load), err)
	}
	if l.ops == nil {
		st.Ops = lat.Hist.Count()
	}
	st.Metrics = map[string]*hist.Histogram{loadgen.Metric: lat.Hist}
	if err := lat.Err(); err != nil {
		return st, fmt.Errorf("load %s: %w", quoteArgv(l.e.Load), err)
	}
	return st, nil
}

// path is p relative to the workload's dir.
func (l *execLoad) path(p string) string {
	if !filepath.IsAbs(p) && l.e.Dir != "" {
		return filepath.Join(l.e.Dir, p)
	}
	return p
}

// runBuiltin runs the built-in load against command until ctx is done:
// its ops are the requests answered, its metric their latencies. A
// request that failed fails the run, as a failing load command does.
func (l *execLoad) runBuiltin(ctx context.Context) (Stats, error) {
	st := Stats{Syscalls: map[string]uint64{}}
	// A command that fails ends the run: what the load would measure
	// then is refused connections. One that exits 0 may have forked the
	// daemon the load talks to.
	cmd := l.cmd
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-cmd.exited:
			if cmd.failed() != nil {
				cancel()
			}
		case <-runCtx.Done():
		}
	}()
	o, err := loadgen.Run(runCtx, l.e.Builtin)
	if err != nil {
		return st, err
	}
	select {
	case <-cmd.exited:
		if failure := cmd.failed(); failure != nil {
			return st, failure
		}
	default:
	}
	st.Ops = o.Latency.Count()
	st.Metrics = map[string]*hist.Histogram{loadgen.Metric: o.Latency}
	if err := o.Err(); err != nil {
		return st, fmt.Errorf("load %s: %w", l.e.Builtin, err)
	}
	return st, nil
}

// stopCommand kills what is in command's group and waits for command.
func (l *execLoad) stopCommand() error {
	if l.cmd == nil {
		return nil
	}
	err := l.cmd.stop(l.group)
	l.cmd = nil
	return err
}

// hook runs setup or teardown to completion, in a group of its own: what
// it leaves running is killed.
func (l *execLoad) hook(ctx context.Context, what string, argv []string) error {
	g, err := cgroup.New()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer g.Remove()
	c, err := l.startChild(g, what, argv, 0)
	if err != nil {
		return err
	}
	timer := time.NewTimer(HookTimeout)
	defer timer.Stop()
	var failure error
	select {
	case <-c.exited:
		failure = c.failed()
	case <-ctx.Done():
		failure = ctx.Err()
	case <-timer.C:
		failure = fmt.Errorf("%s %s still running after %v", what, quoteArgv(argv), HookTimeout)
	}
	return errors.Join(failure, c.stop(g))
}

func (l *execLoad) close() error {
	var errs []error
	errs = append(errs, l.stopCommand())
	if l.started && len(l.e.Teardown) > 0 {
		errs = append(errs, l.hook(context.Background(), "teardown", l.e.Teardown))
	}
	if l.loadG != nil {
		errs = append(errs, l.loadG.Remove())
	}
	errs = append(errs, l.group.Remove())
	return errors.Join(errs...)
}

// child is a started program: command, load or a hook.
type child struct {
	what   string
	argv   []string
	group  *cgroup.Group // its own, below the group it was started in
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait returned
	err    error         // cmd.Wait's, once exited is closed
	ops    atomic.Uint64 // lines of stdout matching ops
	stdout *cappedBuffer // stdout as written, when kept
	stderr *lastLines
	output sync.WaitGroup // the readers of stdout and stderr
}

// startChild starts argv in a new group below g, which holds it and what
// it starts, so that g counts them. Each start has a group of its own
// because the kernel (6.18 at least) kills at once every process
// started with CLONE_INTO_CGROUP into a group that cgroup.kill has once
// emptied: the command started again after a run cut short by its end
// (a warmup's, a trial's) would die of SIGKILL before it ran. Its output
// goes to pipes read here rather than through os/exec's copying, so that
// waiting for it does not wait for a daemon it forked, which holds the
// pipes open.
func (l *execLoad) startChild(g *cgroup.Group, what string, argv []string, out stdoutUse) (*child, error) {
	l.runs++
	leaf := filepath.Join(g.Path, fmt.Sprintf("%s-%d", what, l.runs))
	if err := os.Mkdir(leaf, 0o755); err != nil {
		return nil, fmt.Errorf("start %s: make cgroup: %w", what, err)
	}
	cg, err := cgroup.Open(leaf)
	if err != nil {
		os.Remove(leaf)
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	c, err := l.startIn(cg, what, argv, out)
	if err != nil {
		cg.Remove()
		return nil, err
	}
	return c, nil
}

func (l *execLoad) startIn(g *cgroup.Group, what string, argv []string, out stdoutUse) (*child, error) {
	c := &child{what: what, argv: argv, group: g, exited: make(chan struct{}), stderr: &lastLines{max: 10}}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = l.e.Dir
	cmd.Env = l.env
	// A group of its own: ^C at the terminal reaches tailgate, which
	// stops what it started, rather than the programs themselves.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var closeAfter []*os.File
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
	}()
	er, ew, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	closeAfter = append(closeAfter, ew)
	cmd.Stderr = ew
	var or *os.File
	if out != 0 {
		var ow *os.File
		if or, ow, err = os.Pipe(); err != nil {
			er.Close()
			return nil, err
		}
		closeAfter = append(closeAfter, ow)
		cmd.Stdout = ow
	}
	if err := g.Start(cmd); err != nil {
		er.Close()
		if or != nil {
			or.Close()
		}
		return nil, fmt.Errorf("start %s %s: %w", what, quoteArgv(argv), err)
	}
	c.cmd = cmd
	c.output.Add(1)
	go func() {
		defer c.output.Done()
		defer er.Close()
		scanLines(er, c.stderr.add)
	}()
	if out&keepStdout != 0 {
		c.stdout = &cappedBuffer{max: loadfile.MaxSize}
	}
	if or != nil {
		c.output.Add(1)
		go func() {
			defer c.output.Done()
			defer or.Close()
			var r io.Reader = or
			if c.stdout != nil {
				r = io.TeeReader(or, c.stdout)
			}
			if out&countOps == 0 {
				io.Copy(io.Discard, r)
				return
			}
			scanLines(r, func(line []byte) {
				if l.ops.Match(line) {
					c.ops.Add(1)
				}
			})
		}()
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// stdoutUse says what is done with a child's stdout: nothing (it goes
// nowhere), or its lines counted as ops, or kept, or both.
type stdoutUse int

const (
	countOps stdoutUse = 1 << iota
	keepStdout
)

// cappedBuffer keeps what is written to it up to max bytes, and notes
// that there was more.
type cappedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		b.buf.Write(p[:max(room, 0)])
	} else {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *cappedBuffer) bytes() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes()), b.over
}

// lateFailure is c's failure when it exited, in the instant before a
// run's end, and nil while it runs: a failure then is still a failure.
func (c *child) lateFailure() error {
	select {
	case <-c.exited:
		return c.failed()
	default:
		return nil
	}
}

// failed returns the error of a child that exited by itself with a
// non-zero status (or of a signal), with the end of its stderr; nil if it
// exited 0. Only call it once exited is closed.
func (c *child) failed() error {
	if c.err == nil {
		return nil
	}
	// The last lines may still be in the pipe.
	c.waitOutput()
	return fmt.Errorf("%s %s: %v%s", c.what, quoteArgv(c.argv), c.err, c.stderrTail())
}

// interrupt sends SIGINT to c's process group, as ^C would, and waits a
// little for c to exit: a load generator prints its results then.
func (c *child) interrupt() {
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGINT); err != nil {
		return
	}
	select {
	case <-c.exited:
	case <-time.After(stopWait):
	}
}

// stop kills what is in g (c and whatever it started), waits for c and
// for its output to drain, and removes c's own group.
func (c *child) stop(g *cgroup.Group) error {
	err := g.Kill()
	select {
	case <-c.exited:
	case <-time.After(cgroup.KillTimeout):
		return errors.Join(err, fmt.Errorf("%s %s (pid %d) did not exit after being killed", c.what, quoteArgv(c.argv), c.cmd.Process.Pid))
	}
	c.waitOutput()
	return errors.Join(err, c.group.Remove())
}

// waitOutput waits, a little, for the readers to reach the end of the
// output.
func (c *child) waitOutput() {
	done := make(chan struct{})
	go func() {
		c.output.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopWait):
	}
}

func (c *child) stderrTail() string {
	lines := c.stderr.lines()
	if len(lines) == 0 {
		return ""
	}
	return "; last lines of its stderr:\n\t" + strings.Join(lines, "\n\t")
}

// maxLine is the longest line kept or matched; the rest of a longer line
// is read and dropped.
const maxLine = 64 << 10

// scanLines calls fn with each line read from r (without its newline),
// cut at maxLine, until r ends. It always reads to the end, so that a
// child never blocks on a full pipe.
func scanLines(r io.Reader, fn func([]byte)) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
		}
		switch {
		case err == nil:
			fn(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")))
			line = line[:0]
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			if len(line) > 0 {
				fn(line)
			}
			return
		}
	}
}

// lastLines keeps the last max lines given to add, each cut to 240 bytes.
type lastLines struct {
	mu  sync.Mutex
	max int
	buf []string
}

func (t *lastLines) add(line []byte) {
	s := strings.TrimSpace(string(line[:min(len(line), 240)]))
	if s == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, s)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
}

func (t *lastLines) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.buf)
}
