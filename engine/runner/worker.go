package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/childproc"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// A trial is the unit the statistics resample, so on the host each one runs
// in a fresh worker process: tailgate re-executes itself with workerEnv
// set, the worker attaches the tracers to itself, runs the warmup and one
// trial, writes its scenario result to stdout as JSON and exits. Between
// separate processes the p50 of a syscall loop was measured to vary by 15%
// (CV), inside one process by 2%: trials of one process would be replicas
// of one draw of what varies between runs, and their interval would miss
// it.

// workerEnv, set in a process's environment, makes it a trial worker.
const workerEnv = "TAILGATE_TRIAL_WORKER"

// IsWorker reports whether this process was started as a trial worker.
func IsWorker() bool { return os.Getenv(workerEnv) == "1" }

// workerRequest is what the parent sends a worker on stdin.
type workerRequest struct {
	Scenario *scenarios.Scenario `json:"scenario"` // resolved; Trials is 1
	// CPUOffset rotates the CPUs the workload's threads are pinned to.
	CPUOffset int `json:"cpu_offset"`
	// KernelText, when set, is the kernel's own text: the worker leaves
	// its frames as hex for the parent to name (hostKernel), which reads
	// kallsyms once for every trial instead of each worker once for its own.
	KernelText symbols.TextRange `json:"kernel_text,omitzero"`
	// Sliced makes the worker run its trial in the slices its parent
	// asks for on its fds 3 and 4 (sliceControl).
	Sliced bool `json:"sliced,omitempty"`
	// Loaded names the inherited descriptors of the tracers its parent
	// loaded for it (Loads); none loads them here.
	Loaded *tracing.LoadedFiles `json:"loaded,omitempty"`
	// LeaveModules makes the worker leave the frames of the kernel's
	// modules as hex too: the parent's kallsyms has their symbols
	// (hostKernel).
	LeaveModules bool `json:"leave_modules,omitempty"`
	// LeaveUser makes the worker leave the user frames of other processes
	// as hex, with the mappings that hold them (workerReply.UserMaps), for
	// the parent to name from symbol tables it reads once for every trial
	// (hostUser).
	LeaveUser bool `json:"leave_user,omitempty"`
}

// workerReply is what a worker writes on stdout.
type workerReply struct {
	Scenario *result.Scenario `json:"scenario,omitempty"`
	Error    string           `json:"error,omitempty"`
	// Kind classifies Error so that the parent returns the error type a
	// caller tests for: "privileges", "attach", "interrupted",
	// "unavailable" (a *scenarios.UnavailableError) or "".
	Kind   string `json:"kind,omitempty"`
	Tracer string `json:"tracer,omitempty"`
	// BadTarget and Unsupported carry AttachError's classes.
	BadTarget   bool `json:"bad_target,omitempty"`
	Unsupported bool `json:"unsupported,omitempty"`
	// UserMaps are, by process, the mappings holding the user frames
	// left as hex (workerRequest.LeaveUser).
	UserMaps map[uint32][]symbols.Mapping `json:"user_maps,omitempty"`
}

// WorkerMain runs the trial a parent asked for and returns the exit code.
// main calls it first thing when IsWorker reports true; so do the TestMain
// functions of packages whose tests run trials.
func WorkerMain() int {
	// What the worker starts (an exec workload's commands) is no worker.
	os.Unsetenv(workerEnv)
	// The parent's SIGINT or SIGTERM ends the trial early; the tracers are
	// detached by the deferred closes before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reply := runWorker(ctx, os.Stdin)
	b, err := json.Marshal(reply)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tailgate worker: %v\n", err)
		return 3
	}
	if _, err := os.Stdout.Write(append(b, '\n')); err != nil {
		return 3
	}
	if reply.Error != "" {
		return 1
	}
	return 0
}

func runWorker(ctx context.Context, in io.Reader) workerReply {
	var req workerRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return workerReply{Error: "read request: " + err.Error()}
	}
	if req.Scenario == nil {
		return workerReply{Error: "read request: no scenario"}
	}
	s := req.Scenario
	s.Trials = 1
	if NeedsBPF(s) {
		if err := tracing.RemoveMemlock(); err != nil {
			return replyError(err)
		}
	}
	ctx = scenarios.WithCPUOffset(ctx, req.CPUOffset)
	var ctl *sliceControl
	if req.Sliced {
		ctl = sliceLine()
	}
	kb := kernelBTF{cache: btf.NewCache()}
	if req.Loaded != nil {
		objs, err := tracing.ImportLoaded(*req.Loaded)
		if err != nil {
			return replyError(err)
		}
		defer objs.Close()
		kb.loaded = objs
	}
	sym := newSymbolizer(req.KernelText)
	if req.LeaveUser {
		sym.LeaveOthers()
	}
	if req.LeaveModules {
		sym.LeaveModules()
	}
	sr, err := runScenario(ctx, s, kb, sym, emitter(s, 1, 1, nil), ctl, nil)
	if err != nil {
		return replyError(err)
	}
	return workerReply{Scenario: sr, UserMaps: sym.Mappings()}
}

func replyError(err error) workerReply {
	r := workerReply{Error: err.Error()}
	var ae *AttachError
	var ue *scenarios.UnavailableError
	switch {
	case errors.As(err, &ue):
		r.Kind = "unavailable"
	case errors.Is(err, ErrPrivileges):
		r.Kind = "privileges"
	case errors.As(err, &ae):
		r.Kind, r.Tracer, r.Error = "attach", ae.Tracer, ae.Err.Error()
		r.BadTarget, r.Unsupported = ae.BadTarget, ae.Unsupported
	case errors.Is(err, context.Canceled):
		r.Kind = "interrupted"
	}
	return r
}

// err turns a worker's reply back into the error a caller of Run
// tests for.
func (r workerReply) err() error {
	switch r.Kind {
	case "privileges":
		return fmt.Errorf("%w (%s)", ErrPrivileges, r.Error)
	case "attach":
		return &AttachError{Tracer: r.Tracer, Err: errors.New(r.Error), BadTarget: r.BadTarget, Unsupported: r.Unsupported}
	case "interrupted":
		return context.Canceled
	case "unavailable":
		return &scenarios.UnavailableError{Err: errors.New(r.Error)}
	}
	return errors.New(r.Error)
}

// workerStopGrace is how long an interrupted worker has to detach its
// tracers and exit before it is killed.
const workerStopGrace = 5 * time.Second

// runWorkerTrial runs one trial of s in a fresh worker process and returns
// its scenario result, the trial stamped with the worker's pid.
func runWorkerTrial(ctx context.Context, exe string, s *scenarios.Scenario, cpuOffset int, loaded *tracing.Loaded) (*result.Scenario, error) {
	w, err := newWorker(ctx, exe, s, cpuOffset, false, loaded)
	if err != nil {
		return nil, err
	}
	err = w.start()
	if err == nil {
		err = w.cmd.Wait()
	}
	return w.result(ctx, err)
}

// worker is a trial worker process, not yet started.
type worker struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	kmap      *symbols.SystemMap
	// loaded are the descriptors of the tracers loaded for it, the last
	// of cmd.ExtraFiles, closed here once it has started.
	loaded []*os.File
}

// newWorker prepares a worker for one trial of s (sliced: one that runs
// it in the slices its parent asks for), to attach the tracers in loaded
// if not nil.
func newWorker(ctx context.Context, exe string, s *scenarios.Scenario, cpuOffset int, sliced bool, loaded *tracing.Loaded) (*worker, error) {
	one := *s
	one.Trials = 1
	w := &worker{kmap: hostKernel()}
	wr := workerRequest{Scenario: &one, CPUOffset: cpuOffset, Sliced: sliced, LeaveUser: true}
	if w.kmap != nil {
		wr.KernelText, wr.LeaveModules = w.kmap.Text(), w.kmap.Modules()
	}
	if loaded != nil {
		first := 3 // os/exec's first ExtraFiles descriptor
		if sliced {
			first = sliceOutFD + 1
		}
		files, lf, err := loaded.Export(first)
		if err != nil {
			return nil, err
		}
		w.loaded, wr.Loaded = files, &lf
	}
	in, err := json.Marshal(wr)
	if err != nil {
		w.closeLoaded()
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = &w.out
	cmd.Stderr = &tail{max: 4096, buf: &w.errb}
	// The worker dies with tailgate even when tailgate is killed outright
	// (childproc.Start): no tracer, and no workload thread, outlives it.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = workerStopGrace
	cmd.ExtraFiles = w.loaded
	w.cmd = cmd
	return w, nil
}

// start starts the worker and closes this process's copies of what it
// inherited.
func (w *worker) start() error {
	err := childproc.Start(w.cmd)
	w.closeLoaded()
	return err
}

func (w *worker) closeLoaded() {
	for _, f := range w.loaded {
		f.Close()
	}
	w.loaded = nil
}

// result reads the reply of the worker, which has exited (runErr is what
// its run or wait returned).
func (w *worker) result(ctx context.Context, runErr error) (*result.Scenario, error) {
	cmd := w.cmd
	removeStaleGroups() // the worker's, if it could not remove them
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var reply workerReply
	if err := json.Unmarshal(bytes.TrimSpace(w.out.Bytes()), &reply); err != nil {
		msg := strings.TrimSpace(w.errb.String())
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		return nil, fmt.Errorf("trial worker (pid %d) gave no result: %s", pidOf(cmd), msg)
	}
	if reply.Error != "" {
		return nil, reply.err()
	}
	if reply.Scenario == nil || reply.Scenario.Trials != 1 {
		return nil, fmt.Errorf("trial worker (pid %d) returned no trial", pidOf(cmd))
	}
	w.nameFrames(reply)
	return reply.Scenario, nil
}

// nameFrames names the frames of the reply's evidence that the worker
// left as hex: the kernel's from this kernel's symbols (hostKernel), other
// processes' user frames from their mappings (hostUser).
func (w *worker) nameFrames(reply workerReply) {
	if w.kmap == nil && len(reply.UserMaps) == 0 {
		return
	}
	hostUser.mu.Lock()
	defer hostUser.mu.Unlock()
	for _, m := range reply.Scenario.Metrics {
		for ti := range m.Trials {
			for ei := range m.Trials[ti].Slowest {
				e := &m.Trials[ti].Slowest[ei]
				if w.kmap != nil {
					e.KernelStack = w.kmap.NameStack(e.KernelStack)
				}
				if maps, ok := reply.UserMaps[uint32(e.PID)]; ok {
					hostUser.sym.NameUserStack(e.UserStack, maps)
				}
			}
			if p := m.Trials[ti].Profile; p != nil {
				for si := range p.Samples {
					st := &p.Samples[si]
					if w.kmap != nil {
						st.Kernel = w.kmap.NameStack(st.Kernel)
					}
					if maps, ok := reply.UserMaps[uint32(st.PID)]; ok {
						hostUser.sym.NameUserStack(st.User, maps)
					}
				}
			}
		}
	}
}

// hostUser names the user frames workers leave (workerRequest.LeaveUser),
// keeping each binary's symbol table for every trial of this process.
var hostUser = struct {
	mu  sync.Mutex
	sym *symbols.Symbolizer
}{sym: symbols.NewSymbolizer()}

// hostKernel is this kernel's symbol map, read from /proc/kallsyms once per
// process (about 70 ms here, which each trial's worker paid for itself), or
// nil where kallsyms hides its addresses: the workers then name their
// frames themselves.
var hostKernel = sync.OnceValue(func() *symbols.SystemMap {
	m, err := symbols.ReadSystemMap("/proc/kallsyms")
	if err != nil {
		return nil
	}
	return m
})

func pidOf(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// tail keeps the last max bytes written to it: a worker's last words.
type tail struct {
	max int
	buf *bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

// cpuOffset returns a random offset for a trial: each trial's threads land
// on CPUs chosen anew.
func cpuOffset() int {
	return rand.IntN(max(onlineCPUs(), 1))
}

func onlineCPUs() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return 1
	}
	return set.Count()
}
