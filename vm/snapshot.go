package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Snapshots (docs/vms.md, "Snapshots"): a layout's boot stops at its
// checkpoint (checkpoint.go), the host saves the VM's state to a file in
// the run directory by QEMU's migration, and each further trial of the
// layout is a fresh QEMU that restores that state with a phase seed of
// its own. QEMU 7.2 migrates to a command's input (exec:), not to a file.

// Files of a run with snapshots, in its run directory.
const (
	qmpFile   = "qmp.sock"
	stateFile = "state" // the VM's saved state
)

// maxStopTries bounds the boots of one layout none of whose stops moved
// the guest's clock (ErrStopStill), each already maxStops stops long.
const maxStopTries = 3

// qmpTimeout bounds QEMU's answer to one command, and the wait for its
// monitor's socket.
const qmpTimeout = 30 * time.Second

// RunPhases boots m once in virtual time with its layout seed m.Seed, stops
// the guest at its checkpoint (after its first scenario's tracers are
// attached), saves its state, and runs req's trial from there once per
// phase seed of phases: the first in the booted QEMU, each other in a QEMU
// that restores the saved state. The Results come in the order of phases;
// each trial records its layout and phase seeds. On an error the Results
// of the phases that finished come with it.
func RunPhases(ctx context.Context, m Machine, req GuestRequest, phases []uint64, progress func(string)) ([]*result.Result, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if len(phases) == 0 {
		return nil, errors.New("vm: no phase seeds")
	}
	if !m.Setup.Clock.Virtual() || m.Setup.Accel != "tcg" {
		return nil, errors.New("vm: snapshots need virtual time under TCG (Settings.Phases)")
	}
	if err := m.fill(); err != nil {
		return nil, err
	}
	r, err := newMachineRun(m, progress)
	if err != nil {
		return nil, err
	}
	defer r.close()
	if err := r.attach(&req); err != nil {
		return nil, err
	}
	r.target.Accel, r.target.VCPUs = m.Setup.Accel, m.Setup.VCPUs
	r.target.Clock = m.Setup.Clock.String()
	shift := IcountShift
	r.target.IcountShift = &shift
	// The start phase is drawn after the checkpoint, from the phase seed.
	req.Target, req.Phase, req.Checkpoint = r.target, 0, true
	initrd := r.dir.file(initrdFile)
	if err := buildInitramfs(initrd, m.Init, m.Kernel, m.KernelTypes, req); err != nil {
		return nil, err
	}
	state := ""
	if len(phases) > 1 {
		state = r.dir.file(stateFile)
	}
	var out []*result.Result
	for try := 1; ; try++ {
		res, err := r.phase(ctx, phases[0], "", state)
		if errors.Is(err, ErrStopStill) && try < maxStopTries {
			r.progress(fmt.Sprintf("%s in %d stops (boot %d); booting again", ErrStopStill, maxStops, try))
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res)
		break
	}
	for _, p := range phases[1:] {
		res, err := r.phase(ctx, p, state, "")
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// phase runs one QEMU of a run with snapshots: a boot (from "") or a
// restore of the state in from, given phase seed seed; a boot saves its
// state at the checkpoint to save, when not "". It returns the guest's
// Result, stamped with the machine's layout seed and seed.
func (r *machineRun) phase(ctx context.Context, seed uint64, from, save string) (*result.Result, error) {
	m := r.m
	runCtx := ctx
	if m.Deadline > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, m.Deadline)
		defer cancel()
	}
	results := r.dir.file(resultsFile)
	if err := os.WriteFile(results, nil, 0o600); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if r.scratch != "" {
		// A restored guest finds its disk as the boot left it: empty.
		os.Remove(r.scratch)
		if err := makeScratchDisk(r.scratch, m.ScratchDisk); err != nil {
			return nil, fmt.Errorf("vm: scratch disk: %w", err)
		}
	}
	sock := r.dir.file(qmpFile)
	os.Remove(sock)
	if len(sock) >= 108 {
		return nil, fmt.Errorf("vm: QMP socket path %s is longer than a unix socket's 107 bytes; set TMPDIR shorter", sock)
	}
	what := "booting " + m.Kernel.Spec
	if from != "" {
		what = "restoring the state saved at the checkpoint"
	}
	fmt.Fprintf(r.console, "\ntailgate: %s, phase seed %d\n", what, seed)
	r.progress(fmt.Sprintf("%s, layout seed %d, phase seed %d, virtual time", what, m.Seed, seed))
	ctl := &checkpointControl{sock: sock, save: save, restoring: from != ""}
	b := &boot{vm: m, initrd: r.dir.file(initrdFile), results: results, scratch: r.scratch, kallsyms: r.kallsyms, console: r.console, progress: r.progress}
	b.extra = []string{
		"-device", "pvpanic", "-action", "panic=pause",
		"-fw_cfg", phaseArg(seed),
		"-qmp", "unix:" + sock + ",server=on,wait=on",
	}
	if from != "" {
		b.extra = append(b.extra, "-incoming", "exec:cat "+shellQuote(from))
	}
	b.control = ctl.run
	started := time.Now()
	if err := b.run(runCtx); err != nil {
		return nil, err
	}
	if ctl.still {
		return nil, ErrStopStill
	}
	res, err := r.reply(ctx, runCtx, b, started)
	if err == nil && ctl.err != nil {
		err = r.vmError(&VMError{Err: fmt.Errorf("vm: QMP: %w", ctl.err), Tail: b.scan.tail()})
	}
	if res != nil {
		stampPhase(res, seed)
	}
	if err == nil && ctl.saved {
		if st, serr := os.Stat(save); serr == nil {
			r.progress(fmt.Sprintf("state saved at the checkpoint in %.1fs: %d MiB, at stop %d", ctl.saveTook.Seconds(), st.Size()>>20, ctl.stops))
		}
	}
	return res, err
}

// stampPhase records phase seed seed on every trial of res.
func stampPhase(res *result.Result, seed uint64) {
	for _, s := range res.Scenarios {
		for _, m := range s.Metrics {
			for i := range m.Trials {
				m.Trials[i].PhaseSeed = seed
			}
		}
	}
}

// shellQuote quotes s for sh, which runs QEMU's exec: migrations.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkpointControl drives one QEMU of a run with snapshots over QMP: a
// boot's, which stops at the checkpoint, saves its state there when save
// is set, and goes on; or a restore's, which goes on once the state is in.
type checkpointControl struct {
	sock      string
	save      string
	restoring bool
	// What happened: the guest's stops, none of which moved its clock
	// (still); the state was saved, the last time in saveTook; the first
	// error.
	stops    int
	still    bool
	saved    bool
	saveTook time.Duration
	err      error
}

// run drives QEMU until it exits (ctx ends) or fails; kill kills it.
func (c *checkpointControl) run(ctx context.Context, kill func()) {
	mon, err := dialQMP(ctx, c.sock)
	if err != nil {
		if ctx.Err() == nil {
			c.err = err
			kill()
		}
		return
	}
	defer mon.Disconnect()
	events := make(chan qmp.Event, 64)
	stream, _ := mon.Events(ctx)
	go func() {
		// The monitor blocks on an event nobody reads, answers too.
		for e := range stream {
			select {
			case events <- e:
			default:
			}
		}
	}()
	if c.restoring {
		err = c.resume(ctx, mon)
	} else {
		err = c.checkpoint(ctx, mon, events, kill)
	}
	if err != nil && ctx.Err() == nil {
		c.err = err
		kill()
	}
}

// checkpoint waits for the guest's stop, saves the state when asked, and
// lets the guest go on, at each of its stops (the last is the
// checkpoint's; vm/checkpoint.go); a guest none of whose stops moved its
// clock kills QEMU.
func (c *checkpointControl) checkpoint(ctx context.Context, mon *qmp.SocketMonitor, events <-chan qmp.Event, kill func()) error {
	for {
		var e qmp.Event
		select {
		case <-ctx.Done():
			return nil
		case e = <-events:
		}
		switch e.Event {
		case "GUEST_PANICKED":
			c.stops++
			if c.save != "" {
				t0 := time.Now()
				if err := migrate(ctx, mon, c.save); err != nil {
					return err
				}
				c.saved, c.saveTook = true, time.Since(t0)
			}
			if _, err := command(mon, "cont", nil); err != nil {
				return err
			}
		case "GUEST_CRASHLOADED":
			c.still = true
			kill()
			return nil
		}
	}
}

// resume waits for the incoming state, then lets the guest go on.
func (c *checkpointControl) resume(ctx context.Context, mon *qmp.SocketMonitor) error {
	for {
		raw, err := command(mon, "query-status", nil)
		if err != nil {
			return err
		}
		var st struct {
			Return struct {
				Status string `json:"status"`
			} `json:"return"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("query-status: %w", err)
		}
		switch st.Return.Status {
		case "inmigrate":
		case "running":
			return nil
		case "guest-panicked", "paused", "postmigrate", "prelaunch":
			_, err := command(mon, "cont", nil)
			return err
		default:
			return fmt.Errorf("the restoring VM is %s", st.Return.Status)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// migrate saves the stopped VM's state to path and waits until it is
// written.
func migrate(ctx context.Context, mon *qmp.SocketMonitor, path string) error {
	if _, err := command(mon, "migrate", map[string]string{"uri": "exec:cat > " + shellQuote(path)}); err != nil {
		return err
	}
	for {
		raw, err := command(mon, "query-migrate", nil)
		if err != nil {
			return err
		}
		var st struct {
			Return struct {
				Status    string `json:"status"`
				ErrorDesc string `json:"error-desc"`
			} `json:"return"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("query-migrate: %w", err)
		}
		switch st.Return.Status {
		case "completed":
			return nil
		case "failed", "cancelled":
			return fmt.Errorf("saving the VM's state: migration %s: %s", st.Return.Status, st.Return.ErrorDesc)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// command runs QMP command name with args (nil for none).
func command(mon *qmp.SocketMonitor, name string, args any) ([]byte, error) {
	b, err := json.Marshal(qmp.Command{Execute: name, Args: args})
	if err != nil {
		return nil, err
	}
	out, err := mon.Run(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// dialQMP connects to QEMU's monitor at sock, which QEMU makes as it
// starts and listens on before it runs the guest (server=on,wait=on).
func dialQMP(ctx context.Context, sock string) (*qmp.SocketMonitor, error) {
	deadline := time.Now().Add(qmpTimeout)
	for {
		mon, err := qmp.NewSocketMonitor("unix", sock, qmpTimeout)
		if err == nil {
			if err = mon.Connect(); err == nil {
				return mon, nil
			}
			mon.Disconnect()
			return nil, fmt.Errorf("QMP handshake: %w", err)
		}
		var op *net.OpError
		if !errors.As(err, &op) || time.Now().After(deadline) {
			return nil, fmt.Errorf("QMP: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
