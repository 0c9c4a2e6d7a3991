package vm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/symbols"
)

// GuestRequest is what the host asks the guest to run. It travels in the
// initramfs as JSON.
type GuestRequest struct {
	// Scenarios are the resolved scenarios (scenarios.Scenario) as JSON;
	// vm carries them without looking inside.
	Scenarios []json.RawMessage `json:"scenarios"`
	// Trials, Duration and Warmup override the scenarios' own when set,
	// as in runner.Request.
	Trials    int           `json:"trials,omitempty"`
	Duration  time.Duration `json:"duration,omitempty"`
	Warmup    time.Duration `json:"warmup,omitempty"`
	WarmupSet bool          `json:"warmup_set,omitempty"`
	// SkipUnsupported passes over scenarios the guest's kernel cannot
	// trace (runner.Request.SkipUnsupported).
	SkipUnsupported bool `json:"skip_unsupported,omitempty"`
	// Target is where the run happens; Run fills it in.
	Target result.Target `json:"target"`
	// Modules are the guest paths of the modules to load, dependencies
	// first; Run fills them in.
	Modules []string `json:"modules,omitempty"`
	// ScratchSerial is the serial of the scratch disk the host attached
	// (Machine.ScratchDisk), which the guest waits for before it runs; ""
	// when there is none. Run fills it in.
	ScratchSerial string `json:"scratch_serial,omitempty"`
	// KernelText is the guest kernel's own text, from its System.map:
	// the guest leaves those stack frames as hex and the host names them
	// (nameGuestFrames). Zero when the host has no System.map; the guest
	// then names them from its /proc/kallsyms. Run fills it in.
	KernelText symbols.TextRange `json:"kernel_text,omitzero"`
	// SendKallsyms asks the guest to send the host its kernel's own
	// symbols (the lines of /proc/kallsyms of no module) on the port named
	// kallsymsPortName, for the host to keep beside the cached kernel and
	// name later boots' frames with. Run fills it in.
	SendKallsyms bool `json:"send_kallsyms,omitempty"`
	// KernelTypes is the guest path of the part of its kernel's BTF the
	// tracers relocate against (Machine.KernelTypes), which the guest uses
	// instead of decoding its kernel's own; "" for none. Run fills it in.
	KernelTypes string `json:"kernel_types,omitempty"`
	// Phase is how long the guest sleeps before it runs the request: a
	// seeded boot's start phase in virtual time (PhaseOf), which moves the
	// workload's start against the guest's tick. Run fills it in.
	Phase time.Duration `json:"phase,omitempty"`
	// Checkpoint asks the guest to stop at its checkpoint once its first
	// scenario's tracers are attached (Checkpoint), for the host to save
	// its state, and to take its start phase from the phase seed the host
	// gives after the stop. RunPhases fills it in.
	Checkpoint bool `json:"checkpoint,omitempty"`
}

// GuestRunFunc runs a request inside the guest. progress prints a line on
// the console, which the host passes on to its own progress function. On
// failure it may return the partial Result with the error.
type GuestRunFunc func(ctx context.Context, req GuestRequest, progress func(string)) (*result.Result, error)

// consolePrefix marks the guest's progress lines on the console, among the
// kernel's messages.
const consolePrefix = "tailgate> "

// resultsPortName is the name of the virtio-serial port results go out on.
const resultsPortName = "results"

// kallsymsPortName is the port a guest sends its kernel's symbols on
// (GuestRequest.SendKallsyms).
const kallsymsPortName = "kallsyms"

// guestFailure is the payload of an error frame.
type guestFailure struct {
	Error  string         `json:"error"`
	Result *result.Result `json:"result,omitempty"` // what was measured before the error
}

// IsGuest reports whether this process is the /init of a tailgate VM: PID 1
// with the request Run puts in the initramfs. A program that may be started
// as a guest calls it first thing in main and, if true, hands over to
// GuestMain.
func IsGuest() bool {
	if os.Getpid() != 1 {
		return false
	}
	_, err := os.Stat(guestRequestPath)
	return err == nil
}

// GuestMain is the guest's main: it mounts the file systems a tracer needs
// (proc, sysfs, devtmpfs, tracefs, cgroup2, bpffs, tmpfs), loads the
// modules, runs the request with run, sends the Result (or the error) to
// the host over the results port and powers the VM off. A panic in run is
// reported to the host as an error. It returns only if it cannot power
// off, with the exit code to use.
func GuestMain(run GuestRunFunc) int {
	g := &guest{}
	defer g.powerOff()
	req, err := g.setUp()
	if err != nil {
		g.fail(err, nil)
		return 3
	}
	return g.answer(run, req)
}

// guest is tailgate as a VM's init, and the results port once open.
type guest struct {
	port *os.File
}

// say writes a progress line on the console, for the host.
func (g *guest) say(s string) { fmt.Fprintf(os.Stdout, "%s%s\n", consolePrefix, s) }

// fail says err on the console and sends it to the host, with the partial
// Result when there is one, once the results port is open.
func (g *guest) fail(err error, partial *result.Result) {
	g.say("error: " + err.Error())
	if g.port == nil {
		return
	}
	b, jerr := json.Marshal(guestFailure{Error: err.Error(), Result: partial})
	if jerr != nil {
		b, _ = json.Marshal(guestFailure{Error: err.Error()})
	}
	if werr := writeFrame(g.port, frameError, b); werr != nil {
		g.say("cannot send the error to the host: " + werr.Error())
	}
}

// powerOff, deferred, reports a panic to the host, then syncs and powers
// the VM off.
func (g *guest) powerOff() {
	if r := recover(); r != nil {
		g.fail(fmt.Errorf("guest panic: %v\n%s", r, debug.Stack()), nil)
	}
	if g.port != nil {
		g.port.Close()
	}
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Fprintf(os.Stderr, "tailgate guest: power off: %v\n", err)
	}
}

// setUp readies the guest for the host's request, and reads it: the file
// systems, the loopback interface, the modules, the results port and the
// scratch disk.
func (g *guest) setUp() (GuestRequest, error) {
	if err := mountGuestFS(); err != nil {
		return GuestRequest{}, err
	}
	if err := upLoopback(); err != nil {
		return GuestRequest{}, err
	}
	req, err := readGuestRequest()
	if err != nil {
		return req, err
	}
	collectLate(req.Target.MemMiB)
	started := uptime()
	modStart := time.Now()
	if err := loadModules(req.Modules); err != nil {
		return req, err
	}
	if g.port, err = openResultsPort(10 * time.Second); err != nil {
		return req, err
	}
	if req.ScratchSerial != "" {
		if err := waitForDisk(req.ScratchSerial, 10*time.Second); err != nil {
			return req, err
		}
	}
	g.say(fmt.Sprintf("guest ready at %s since boot (init at %s; mounts, %d modules in %.2fs, results port)", uptime(), started, len(req.Modules), time.Since(modStart).Seconds()))
	return req, nil
}

// answer runs req with run and sends the host its Result, or why there is
// none; it returns the exit code.
func (g *guest) answer(run GuestRunFunc, req GuestRequest) int {
	res, err := run(context.Background(), req, g.say)
	if err != nil {
		g.fail(err, res)
		return 1
	}
	if res == nil {
		g.fail(errors.New("guest run returned no result"), nil)
		return 3
	}
	if req.SendKallsyms {
		if err := sendKallsyms(); err != nil {
			g.say("cannot send the kernel's symbols to the host: " + err.Error())
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		g.fail(fmt.Errorf("encode result: %w", err), nil)
		return 3
	}
	if err := writeFrame(g.port, frameResult, b); err != nil {
		g.say("cannot send the result to the host: " + err.Error())
		return 3
	}
	return 0
}

// collectLate leaves the garbage collector off until the heap reaches
// half the VM's memory, unless GOGC or GOMEMLIMIT came on the kernel's
// command line (the kernel hands unknown VAR=value parameters to init as
// its environment). A boot runs one short-lived request, and loading the
// tracers allocates much garbage: under TCG the collections it set off
// cost about 0.09 s of a boot to first result (3.29 s against 3.20 s, the
// median of five `tailgate run syscall-read --kernel debian:6.1-cloud
// --cmdline GOGC=off` and five without).
func collectLate(memMiB int) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if memMiB <= 0 {
		memMiB = 256
	}
	debug.SetMemoryLimit(int64(memMiB) << 20 / 2)
	debug.SetGCPercent(-1)
}

// uptime reads /proc/uptime, for progress lines that say where a boot's
// time goes.
func uptime() string {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return "?"
	}
	f, _, _ := strings.Cut(string(b), " ")
	return f + "s"
}

// mountGuestFS mounts what the runner and the tracers need.
func mountGuestFS() error {
	mounts := []struct {
		fstype, target string
		flags          uintptr
		data           string
		optional       bool
	}{
		{"proc", "/proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "", false},
		{"sysfs", "/sys", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "", false},
		{"devtmpfs", "/dev", unix.MS_NOSUID, "mode=0755", false},
		{"tmpfs", "/tmp", unix.MS_NOSUID | unix.MS_NODEV, "", false},
		{"tmpfs", "/run", unix.MS_NOSUID | unix.MS_NODEV, "mode=0755", false},
		{"tracefs", "/sys/kernel/tracing", 0, "", false},
		{"cgroup2", "/sys/fs/cgroup", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "", false},
		{"bpf", "/sys/fs/bpf", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "mode=0700", false},
		{"debugfs", "/sys/kernel/debug", 0, "", true},
	}
	for _, m := range mounts {
		if err := os.MkdirAll(m.target, 0o755); err != nil && !m.optional {
			return fmt.Errorf("mount %s: %w", m.target, err)
		}
		err := unix.Mount(m.fstype, m.target, m.fstype, m.flags, m.data)
		if err != nil && !errors.Is(err, unix.EBUSY) && !m.optional {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	return nil
}

// upLoopback brings the loopback interface up, as an init system's
// network setup would: the kernel gives it 127.0.0.1 as it comes up, and
// the tcp-rr workload connects over it.
func upLoopback() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: bring lo up: %w", err)
	}
	return nil
}

func readGuestRequest() (GuestRequest, error) {
	var req GuestRequest
	b, err := os.ReadFile(guestRequestPath)
	if err != nil {
		return req, fmt.Errorf("guest request: %w", err)
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return req, fmt.Errorf("guest request %s: %w", guestRequestPath, err)
	}
	return req, nil
}

// loadModules loads module files in order. Compressed modules are handed
// to the kernel as they are (MODULE_INIT_COMPRESSED_FILE).
func loadModules(paths []string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("load module: %w", err)
		}
		flags := 0
		if ext := filepath.Ext(p); ext == ".xz" || ext == ".zst" || ext == ".gz" {
			flags = unix.MODULE_INIT_COMPRESSED_FILE
		}
		err = unix.FinitModule(int(f.Fd()), "", flags)
		f.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("load module %s: %w", filepath.Base(p), err)
		}
	}
	return nil
}

// openResultsPort waits for the virtio-serial port named "results" and
// opens it. Ports appear asynchronously after the driver binds.
func openResultsPort(wait time.Duration) (*os.File, error) {
	return openPort(resultsPortName, wait)
}

// sendKallsyms writes the kernel's own lines of /proc/kallsyms (those of
// no module, which carry a tab before the module's name) to the kallsyms
// port.
func sendKallsyms() error {
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.Grow(len(b))
	for line := range bytes.Lines(b) {
		if bytes.IndexByte(line, '\t') < 0 {
			out.Write(line)
		}
	}
	port, err := openPort(kallsymsPortName, time.Second)
	if err != nil {
		return err
	}
	defer port.Close()
	_, err = port.Write(out.Bytes())
	return err
}

// openPort opens the virtio-serial port named name, waiting for it.
func openPort(name string, wait time.Duration) (*os.File, error) {
	deadline := time.Now().Add(wait)
	for {
		names, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil || strings.TrimSpace(string(b)) != name {
				continue
			}
			dev := filepath.Join("/dev", filepath.Base(filepath.Dir(n)))
			f, err := os.OpenFile(dev, os.O_WRONLY, 0)
			if err == nil {
				return f, nil
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("open %s port: %w", name, err)
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no virtio port named %q after %v (virtio_console missing?)", name, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForDisk waits for the disk whose serial is serial to show in
// /sys/block and its node in /dev: virtio-blk probes after its module
// loads.
func waitForDisk(serial string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		paths, _ := filepath.Glob("/sys/block/*/serial")
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil || strings.TrimSpace(string(b)) != serial {
				continue
			}
			if _, err := os.Stat(filepath.Join("/dev", filepath.Base(filepath.Dir(p)))); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no disk of serial %q after %v (virtio_blk missing?)", serial, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
