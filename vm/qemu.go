package vm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
	"github.com/tailgate-ci/tailgate/kernels"
)

// Machine is one QEMU virtual machine to run a request in.
type Machine struct {
	// Name is the target's name, recorded in the Result ("vm" if empty).
	Name   string
	Kernel *kernels.Kernel
	// Setup is how it boots (Settings.Resolve): accelerator, clock,
	// vCPUs, memory.
	Setup Setup
	// FellBack, when set, is told the Setup a boot fell back to when KVM
	// did not start its kernel (Setup.WithoutKVM), for the next boots.
	FellBack func(Setup)
	// Seed, in virtual time, is the boot's seed (seed.go): its guest's
	// layout token and, but in RunPhases, its workload's start phase are
	// drawn from it, and its trials record it. 0 draws nothing: every
	// boot is the same.
	Seed uint64
	// Cmdline is appended to the kernel command line tailgate needs.
	Cmdline string
	// Deadline bounds the whole run, boot to power-off; 0 means none
	// beyond the context's.
	Deadline time.Duration
	// ConsoleLog is ignored: the guest console is written to console.log
	// in the run's own directory (tailgate-vm-NAME-* in os.TempDir()),
	// kept only when the run fails, and VMError.ConsoleLog names it. A
	// name chosen by the caller, fixed and in a shared directory, could be
	// a planted symlink or shared by two runs.
	//
	// Deprecated: the field has no effect.
	ConsoleLog string
	// Init is the static binary to run as the guest's /init; empty means
	// the running executable, which then must call IsGuest and GuestMain.
	Init string
	// QEMU is the QEMU binary; empty means qemu-system-x86_64 from PATH.
	QEMU string
	// ScratchDisk, when positive, is the size in bytes of a scratch disk
	// to attach: a sparse raw file in the run directory, removed with it,
	// on virtio-blk with serial ScratchSerial, for workloads that write a
	// block device of their own (scenarios.ScratchSize). Rounded up to a
	// MiB.
	ScratchDisk int64
	// KernelTypes is a file of BTF the guest's tracers relocate against
	// instead of decoding the kernel's own (0.35-0.4 s under TCG): the
	// part of the kernel's BTF tailgate's objects use, cut on the host
	// (internal/kerneltypes). "" for none.
	KernelTypes string
}

// ScratchSerial is the serial of the scratch disk (scenarios.ScratchSerial,
// which the guest's workload looks for).
const ScratchSerial = "tailgate-scratch"

// maxScratchDisk bounds Machine.ScratchDisk; the file is sparse, but a guest
// could fill it.
const maxScratchDisk = 1 << 30

// The kernel command line tailgate always passes. panic=-1 with QEMU's
// -no-reboot turns a panic into a QEMU exit; oops=panic makes an oops one
// too, since a run with an oops is not data.
const baseCmdline = "console=ttyS0 quiet mitigations=off panic=-1 oops=panic"

// Errors Run can return, wrapped in a *VMError.
var (
	// ErrGuestPanic: the console showed a kernel panic, an oops or a BUG.
	ErrGuestPanic = errors.New("guest kernel panicked")
	// ErrDeadline: the VM ran past Machine.Deadline and was killed.
	ErrDeadline = errors.New("VM deadline exceeded")
	// ErrNoResult: the guest powered off without sending a result.
	ErrNoResult = errors.New("guest sent no result")
	// ErrKVM: Accel is "kvm" but KVM does not run guests here.
	ErrKVM = errors.New("KVM is not usable")
)

// VMError is a failed VM run with what the console showed.
type VMError struct {
	Err error // one of the Err* sentinels, a *GuestError, or QEMU's failure
	// Lines are the console lines that show the failure (panic, oops, BUG).
	Lines []string
	// Tail is the end of the console.
	Tail []string
	// ConsoleLog is the file holding the whole console.
	ConsoleLog string
}

func (e *VMError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if len(e.Lines) > 0 {
		b.WriteString(": ")
		b.WriteString(e.Lines[0])
		for _, l := range e.Lines[1:] {
			b.WriteString("\n  " + l)
		}
	}
	var g *GuestError
	if len(e.Tail) > 0 && !errors.As(e.Err, &g) {
		fmt.Fprintf(&b, "\nlast %d console lines:", len(e.Tail))
		for _, l := range e.Tail {
			b.WriteString("\n  | " + l)
		}
	}
	if e.ConsoleLog != "" {
		fmt.Fprintf(&b, "\nconsole log: %s", e.ConsoleLog)
	}
	return b.String()
}

func (e *VMError) Unwrap() error { return e.Err }

// GuestError is an error the run function returned inside the guest.
type GuestError struct{ Msg string }

func (e *GuestError) Error() string { return "in the guest: " + e.Msg }

// tailLines is how much of the console an error shows.
const tailLines = 25

// Run boots vm with req, streams the guest's progress lines to progress
// (nil for none), and returns the guest's Result, its Target describing
// the VM. It kills QEMU on every way out: the end of the run, the
// deadline, ctx's cancellation; and QEMU dies with this process
// (PR_SET_PDEATHSIG). A guest failure is a *VMError; if the guest's run
// failed part way, its partial Result comes with the error.
func Run(ctx context.Context, m Machine, req GuestRequest, progress func(string)) (*result.Result, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if err := m.fill(); err != nil {
		return nil, err
	}
	r, err := newMachineRun(m, progress)
	if err != nil {
		return nil, err
	}
	defer r.close()
	runCtx := ctx
	if m.Deadline > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, m.Deadline)
		defer cancel()
	}
	if err := r.attach(&req); err != nil {
		return nil, err
	}
	b, started, err := r.boot(runCtx, m.Setup, req)
	if err != nil {
		return nil, err
	}
	return r.reply(ctx, runCtx, b, started)
}

// fill checks m and gives its unset fields their defaults.
func (m *Machine) fill() error {
	if m.Kernel == nil {
		return errors.New("vm: no kernel")
	}
	if m.ScratchDisk < 0 || m.ScratchDisk > maxScratchDisk {
		return fmt.Errorf("vm: scratch disk of %d bytes: want 1 byte to 1 GiB", m.ScratchDisk)
	}
	if m.Setup.Accel == "" || m.Setup.VCPUs < 1 || m.Setup.MemMiB < 1 {
		return errors.New("vm: no setup (Settings.Resolve)")
	}
	if m.Name == "" {
		m.Name = "vm"
	}
	if m.Init == "" {
		init, err := os.Executable()
		if err != nil {
			return fmt.Errorf("vm: guest init: %w", err)
		}
		m.Init = init
	}
	return nil
}

// machineRun is one Run: the machine, the run directory that holds its
// initramfs, console log, results file and scratch disk, and the Target
// its Result says it ran on.
type machineRun struct {
	m        Machine
	progress func(string)
	dir      *runDir
	console  *os.File
	// keepConsole keeps the console log when the run directory goes:
	// an error names it.
	keepConsole bool
	target      result.Target
	scratch     string             // the scratch disk's file; "" for none
	smap        *symbols.SystemMap // the kernel's symbols; nil: the guest names its frames
	kallsyms    string             // where the guest sends its kernel's symbols; "" for nowhere
}

// newMachineRun makes the run's directory and console log.
func newMachineRun(m Machine, progress func(string)) (*machineRun, error) {
	// A QEMU that cannot say its version is recorded without one; if it
	// cannot boot either, the boot says so.
	qemuVersion, _ := QEMUVersion(m.QEMU)
	r := &machineRun{m: m, progress: progress, target: result.Target{
		Name: m.Name, Kind: "vm", Kernel: m.Kernel.Spec,
		MemMiB: m.Setup.MemMiB, Cmdline: m.Cmdline, QEMU: qemuVersion,
	}}
	dir, err := newRunDir(m.Name, progress)
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	r.dir = dir
	// The console log is the run directory's: a fixed name in a shared
	// directory could be a planted symlink, or another run's log.
	if r.console, err = os.OpenFile(dir.file(consoleFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		dir.remove()
		return nil, fmt.Errorf("vm: console log: %w", err)
	}
	return r, nil
}

// close removes the run directory, but for a console log an error names.
func (r *machineRun) close() {
	r.console.Close()
	if r.keepConsole {
		r.dir.keepOnly(consoleFile)
	} else {
		r.dir.remove()
	}
}

// vmError keeps the console log for e to name.
func (r *machineRun) vmError(e *VMError) error {
	r.keepConsole = true
	e.ConsoleLog = r.dir.file(consoleFile)
	return e
}

// attach makes the scratch disk the machine asks for, and says in req
// where the guest's kernel frames are named: here from the kernel's
// System.map (or the symbols a guest of it sent before), else in the
// guest, which then sends its symbols to be kept.
func (r *machineRun) attach(req *GuestRequest) error {
	if r.m.ScratchDisk > 0 {
		r.scratch = r.dir.file(scratchFile)
		if err := makeScratchDisk(r.scratch, r.m.ScratchDisk); err != nil {
			return fmt.Errorf("vm: scratch disk: %w", err)
		}
		req.ScratchSerial = ScratchSerial
	}
	r.smap = systemMap(r.m.Kernel)
	if r.smap != nil {
		req.KernelText = r.smap.Text()
	} else if kallsymsCache(r.m.Kernel) != "" {
		r.kallsyms = r.dir.file(kallsymsFile)
		req.SendKallsyms = true
	}
	return nil
}

// boot boots the machine as setup says and waits for QEMU to exit; when
// KVM starts no kernel it boots again as setup.WithoutKVM says, tells
// Machine.FellBack, and remembers for this host's boot that KVM is broken
// here (CheckKVM).
func (r *machineRun) boot(ctx context.Context, setup Setup, req GuestRequest) (*boot, time.Time, error) {
	m := r.m
	initrd, results := r.dir.file(initrdFile), r.dir.file(resultsFile)
	for {
		r.target.Accel, r.target.VCPUs = setup.Accel, setup.VCPUs
		r.target.Clock, r.target.IcountShift = setup.Clock.String(), nil
		if setup.Clock.Virtual() {
			shift := IcountShift
			r.target.IcountShift = &shift
		}
		req.Target, req.Phase = r.target, 0
		if setup.Clock.Virtual() && m.Seed != 0 {
			req.Phase = PhaseOf(m.Seed)
		}
		if err := buildInitramfs(initrd, m.Init, m.Kernel, m.KernelTypes, req); err != nil {
			return nil, time.Time{}, err
		}
		if err := os.WriteFile(results, nil, 0o600); err != nil {
			return nil, time.Time{}, fmt.Errorf("vm: %w", err)
		}
		r.progress(fmt.Sprintf("booting %s with %s (%s), %s, %d vCPUs, %d MiB", m.Kernel.Spec, strings.ToUpper(setup.Accel), setup.Why, setup.Clock.phrase(setup.Accel), setup.VCPUs, setup.MemMiB))
		booted := m
		booted.Setup = setup
		b := &boot{vm: booted, initrd: initrd, results: results, scratch: r.scratch, kallsyms: r.kallsyms, console: r.console, progress: r.progress}
		started := time.Now()
		if err := b.run(ctx); err != nil {
			return nil, time.Time{}, err
		}
		if !b.stalled {
			return b, started, nil
		}
		stall := "KVM did not start the kernel: " + b.stallReason()
		fallback, err := setup.WithoutKVM(b.stallReason())
		if err != nil {
			return nil, time.Time{}, r.vmError(&VMError{Err: err, Tail: b.scan.tail()})
		}
		if CheckKVM().Usable {
			// The probe passed and the kernel did not start: the next
			// runs of this boot go to TCG at once.
			recordKVMBroken(b.stallReason())
		}
		fmt.Fprintf(r.console, "\ntailgate: %s; retrying with TCG\n", stall)
		r.progress(stall + "; retrying with TCG")
		setup = fallback
		if m.FellBack != nil {
			m.FellBack(setup)
		}
	}
}

// reply reads what the guest of boot b, started at started, sent back:
// its Result, named as the machine and its frames named, or why there is
// none. ctx is the caller's, runCtx the run's (with the deadline).
func (r *machineRun) reply(ctx, runCtx context.Context, b *boot, started time.Time) (*result.Result, error) {
	name, scan := r.m.Name, b.scan
	fail := func(err error) error {
		return r.vmError(&VMError{Err: err, Lines: scan.bad, Tail: scan.tail()})
	}
	switch {
	case b.overflow != "":
		return nil, fail(fmt.Errorf("vm %s: %w: %s; QEMU was killed", name, ErrBadReply, b.overflow))
	case len(scan.bad) > 0:
		return nil, fail(ErrGuestPanic)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, fail(fmt.Errorf("%w: killed after %v", ErrDeadline, r.m.Deadline))
	case ctx.Err() != nil:
		// Interrupted by the user: the console is not news.
		return nil, fmt.Errorf("vm %s: %w", name, context.Cause(ctx))
	}
	raw, err := readReply(b.results)
	if errors.Is(err, ErrBadReply) {
		return nil, fail(fmt.Errorf("vm %s: %w", name, err))
	}
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if len(raw) == 0 {
		if b.waitErr != nil {
			return nil, fail(fmt.Errorf("qemu: %v: %s", b.waitErr, b.stderrTail()))
		}
		return nil, fail(ErrNoResult)
	}
	res, failure, err := parseReply(raw)
	if err != nil {
		return nil, fail(fmt.Errorf("vm %s: %w", name, err))
	}
	if res != nil {
		res.Target = r.target
		res.Partial = res.Partial || failure != ""
		nameGuestFrames(res, r.smap)
		if b.vm.Setup.Clock.Virtual() {
			stampVirtual(res, r.m.Seed, started, started.Add(b.elapsed))
		}
	}
	if failure != "" {
		return res, fail(&GuestError{Msg: failure})
	}
	if r.kallsyms != "" {
		keepKallsyms(r.m.Kernel, r.kallsyms)
	}
	r.progress(fmt.Sprintf("VM done in %.1fs", b.elapsed.Seconds()))
	return res, nil
}

// kernelStartTimeout is how long KVM may take to show the kernel's first
// console line. Some nested KVM hosts accept /dev/kvm and then hang the
// guest, or abort QEMU, before the kernel prints anything.
const kernelStartTimeout = 10 * time.Second

func buildInitramfs(path, init string, k *kernels.Kernel, kernelTypes string, req GuestRequest) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	err = writeInitramfs(f, init, k, kernelTypes, req)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	return nil
}

// boot is one QEMU process.
type boot struct {
	vm       Machine // its Setup the one it boots with
	initrd   string
	results  string
	scratch  string // the scratch disk's file; "" for none
	kallsyms string // where the guest's kernel symbols go; "" for nowhere
	console  io.Writer
	progress func(string)

	scan    *consoleScanner
	stderr  bytes.Buffer
	waitErr error
	elapsed time.Duration
	// stalled: under KVM, the kernel printed nothing before QEMU exited or
	// kernelStartTimeout passed.
	stalled bool
	// overflow says which file the guest wrote past its limit, when
	// watchSizes killed QEMU for it; "" otherwise.
	overflow string
	// extra are QEMU options beyond the machine's (a run with snapshots'
	// monitor, pvpanic and phase seed), and control, when set, drives
	// QEMU as it runs until its context ends; kill kills QEMU.
	extra   []string
	control func(ctx context.Context, kill func())
}

// watchSizes kills QEMU (kill) when a file the guest writes through grows
// past what the host reads of it: QEMU's file chardev has no limit, and a
// guest could fill the host's disk. It returns when done is closed.
func (b *boot) watchSizes(done <-chan struct{}, kill func()) {
	limits := map[string]int64{b.results: maxReply}
	if b.kallsyms != "" {
		limits[b.kallsyms] = maxKallsyms
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		for path, limit := range limits {
			if st, err := os.Stat(path); err == nil && st.Size() > limit {
				b.overflow = fmt.Sprintf("%s grew past %d bytes", filepath.Base(path), limit)
				kill()
				return
			}
		}
	}
}

func (b *boot) stallReason() string {
	if b.waitErr != nil && !b.stalledByTimer() {
		return fmt.Sprintf("qemu: %v: %s", b.waitErr, b.stderrTail())
	}
	return fmt.Sprintf("no console output in %v", kernelStartTimeout)
}

// stderrTail is the last line QEMU wrote on its standard error.
func (b *boot) stderrTail() string {
	lines := strings.Split(strings.TrimSpace(b.stderr.String()), "\n")
	return lines[len(lines)-1]
}

func (b *boot) stalledByTimer() bool { return b.scan.timedOut.Load() }

// run starts QEMU and waits for it to exit; it is killed when ctx ends.
func (b *boot) run(ctx context.Context) error {
	cmdline := bootCmdline(b.vm)
	qemu := b.vm.QEMU
	if qemu == "" {
		qemu = "qemu-system-x86_64"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := b.qemuArgs(cmdline)
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 5 * time.Second
	// QEMU dies with us even if we are killed without a chance to clean
	// up; its own process group keeps a terminal's ^C for us to handle.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Stderr = &limitedWriter{w: &b.stderr, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	b.scan = &consoleScanner{log: b.console, progress: b.progress, started: make(chan struct{})}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("vm: start qemu: %w", err)
	}
	done := make(chan struct{})
	if b.vm.Setup.Accel == "kvm" {
		go func() {
			t := time.NewTimer(kernelStartTimeout)
			defer t.Stop()
			select {
			case <-b.scan.started:
			case <-done:
			case <-t.C:
				b.scan.timedOut.Store(true)
				cancel()
			}
		}()
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		b.watchSizes(done, cancel)
	}()
	controlled := make(chan struct{})
	controlCtx, stopControl := context.WithCancel(ctx)
	go func() {
		defer close(controlled)
		if b.control != nil {
			b.control(controlCtx, cancel)
		}
	}()
	b.scan.run(stdout) // returns when QEMU exits or is killed
	b.waitErr = cmd.Wait()
	stopControl()
	close(done)
	<-watched
	<-controlled
	b.elapsed = time.Since(t0)
	if b.vm.Setup.Accel == "kvm" && !b.scan.hasStarted() && ctx.Err() == nil || b.scan.timedOut.Load() {
		b.stalled = true
	}
	return nil
}

// qemuArgs is QEMU's command line. The machine is "pc": measured here it
// boots as fast as microvm once the kernel is an ELF (PVH), without
// microvm's need for virtio-mmio and a TSC frequency on the command line.
func (b *boot) qemuArgs(cmdline string) []string {
	vm, accel, clock := b.vm, b.vm.Setup.Accel, b.vm.Setup.Clock
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
		"-machine", "pc",
		"-smp", fmt.Sprint(vm.Setup.VCPUs), "-m", fmt.Sprint(vm.Setup.MemMiB),
		"-kernel", vm.Kernel.BootImage(), "-initrd", b.initrd, "-append", cmdline,
		"-device", "virtio-serial-pci" + clock.VirtioOption(),
		"-chardev", "file,id=results,path=" + b.results,
		"-device", "virtserialport,chardev=results,name=" + resultsPortName,
	}
	if b.kallsyms != "" {
		args = append(args, "-chardev", "file,id=kallsyms,path="+b.kallsyms,
			"-device", "virtserialport,chardev=kallsyms,name="+kallsymsPortName)
	}
	if b.scratch != "" {
		// The guest's flushes are the host file's fdatasyncs (cache
		// writeback, QEMU's default): the disk has a volatile cache, as
		// the guest sees it, and a flush reaches the host's disk.
		args = append(args,
			"-drive", "file="+b.scratch+",if=none,id=scratch,format=raw,cache=writeback",
			"-device", "virtio-blk-pci,drive=scratch,serial="+ScratchSerial+clock.VirtioOption())
	}
	if accel == "kvm" {
		args = append(args, "-accel", "kvm", "-cpu", "host")
	} else {
		a := "tcg"
		if vm.Setup.VCPUs > 1 {
			// Multi-threaded TCG oopses guests while BPF programs attach.
			a += ",thread=single"
		}
		args = append(args, "-accel", a, "-cpu", "max")
		args = append(args, clock.QEMUArgs()...)
	}
	return append(args, b.extra...)
}

// consoleScanner copies the console to the log, passes the guest's
// progress lines on, and watches for signs of a broken kernel.
type consoleScanner struct {
	log      io.Writer
	progress func(string)
	bad      []string      // panic, oops and BUG lines (at most 20)
	started  chan struct{} // closed at the kernel's first console line
	timedOut atomic.Bool   // the kernel did not start in time
	last     []string      // ring of the last tailLines lines
	next     int
	logged   int  // bytes written to log
	logCut   bool // log reached maxConsoleLog
}

// badMarkers are what the kernel prints when it is no longer fit to
// measure anything.
var badMarkers = []string{"Kernel panic", "Oops", "BUG:", "general protection fault"}

// Limits of the console, which the guest writes: a line is scanned up to
// maxConsoleLine bytes (the rest is only logged), and the log keeps the
// first maxConsoleLog bytes.
const (
	maxConsoleLine = 64 << 10
	maxConsoleLog  = 64 << 20
)

func (s *consoleScanner) run(r io.Reader) {
	br := bufio.NewReaderSize(r, maxConsoleLine)
	for {
		line, err := br.ReadSlice('\n')
		s.logBytes(line)
		text := strings.TrimRight(string(line), "\r\n")
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = br.ReadSlice('\n')
			s.logBytes(more)
		}
		if len(line) > 0 {
			s.line(text)
		}
		if err != nil {
			return
		}
	}
}

// logBytes writes b to the console log, up to maxConsoleLog bytes in all.
func (s *consoleScanner) logBytes(b []byte) {
	if s.logCut {
		return
	}
	if s.logged+len(b) > maxConsoleLog {
		s.logCut = true
		fmt.Fprintf(s.log, "\n[tailgate: the console log stops here, at its limit of %d bytes]\n", maxConsoleLog)
		return
	}
	s.logged += len(b)
	s.log.Write(b)
}

func (s *consoleScanner) hasStarted() bool {
	select {
	case <-s.started:
		return true
	default:
		return false
	}
}

func (s *consoleScanner) line(l string) {
	if !s.hasStarted() && (strings.Contains(l, "Linux version") || strings.HasPrefix(l, "[    0.")) {
		close(s.started)
	}
	if len(s.last) < tailLines {
		s.last = append(s.last, l)
	} else {
		s.last[s.next] = l
		s.next = (s.next + 1) % tailLines
	}
	if p, ok := strings.CutPrefix(l, consolePrefix); ok {
		s.progress(p)
		return
	}
	for _, m := range badMarkers {
		if strings.Contains(l, m) {
			if len(s.bad) < 20 {
				s.bad = append(s.bad, strings.TrimSpace(l))
			}
			return
		}
	}
}

func (s *consoleScanner) tail() []string {
	return append(append([]string(nil), s.last[s.next:]...), s.last[:s.next]...)
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// makeScratchDisk makes the scratch disk's file: sparse, size rounded up
// to a MiB.
func makeScratchDisk(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate((size + 1<<20 - 1) &^ (1<<20 - 1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
