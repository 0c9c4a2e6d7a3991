package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/kerneltypes"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/scenarios"
	"github.com/tailgate-ci/tailgate/vm"
)

// Spec is what the command line asks of every trial: the scenarios and the
// overrides of their trials, duration and warmup.
type Spec struct {
	Scenarios []*scenarios.Scenario
	// Trials, when > 0, is the trials of every scenario (a run) or the
	// rounds (a matrix).
	Trials   int
	Duration time.Duration
	Warmup   time.Duration
	// WarmupSet says Warmup was given: 0 is a valid override.
	WarmupSet bool
	// SkipUnsupported passes over the scenarios this kernel cannot trace.
	SkipUnsupported bool
	// Seed is the seed of the first trial where trials are seeded
	// (runner.Request.Seed); 0 is 1.
	Seed uint64
}

// Check refuses overrides no run could take.
func (s Spec) Check() error {
	if s.Trials < 0 {
		return Inputf("--trials must be positive, got %d", s.Trials)
	}
	if s.Duration < 0 {
		return Inputf("--duration must be positive, got %s", s.Duration)
	}
	return nil
}

// request is the runner request of s on the target called name.
func (s Spec) request(name string) runner.Request {
	return runner.Request{
		Scenarios: s.Scenarios, Trials: s.Trials, Duration: s.Duration,
		Warmup: s.Warmup, WarmupSet: s.WarmupSet, SkipUnsupported: s.SkipUnsupported,
		Target: result.Target{Name: name, Kind: "host"}, Seed: s.Seed,
	}
}

// Resolve is s as it runs: the overrides applied.
func (s Spec) Resolve(sc *scenarios.Scenario) *scenarios.Scenario {
	return s.request("").Resolve(sc)
}

// Target is one place trials run.
type Target interface {
	// Name names the target in Results and messages.
	Name() string
	// Prepare checks that req can run here, before any trial, and returns
	// it as it will run (a VM lengthens short trials).
	Prepare(req runner.Request) (runner.Request, error)
	// Run runs every trial of req, each as fresh as the target makes
	// them. The trials that finished before an error are returned beside
	// it, in a Result marked partial.
	Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error)
}

// Interleaver is a target whose trials can share this machine's time with
// another's, in slices (runner.RunPair): a host, or a host variant that
// holds no sysctls or holds them during its own slices only
// (Variant.SliceSysctls).
type Interleaver interface {
	// Interleave returns req as the target runs it in a pair, and stamp,
	// which records on the Result what the target's own Run would; why
	// says why the target's trials cannot run in slices, "" if they can.
	Interleave(req runner.Request) (run runner.Request, stamp func(*result.Result), why string)
}

// Host is this machine: every trial in a fresh worker process.
type Host struct {
	TargetName string
	// Runner runs a request; nil is runner.Run.
	Runner func(context.Context, runner.Request) (*result.Result, error)
}

// HostName is the name of the host target.
const HostName = "host"

func (h *Host) Name() string { return cmp.Or(h.TargetName, HostName) }

func (h *Host) Prepare(req runner.Request) (runner.Request, error) {
	for _, sc := range req.Scenarios {
		if err := scenarios.CheckAllowedCPUs(sc.Workload.CPUs); err != nil {
			return req, Inputf("scenario %s: %v", sc.Name, err)
		}
	}
	return req, nil
}

func (h *Host) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	run := h.Runner
	if run == nil {
		run = runner.Run
	}
	return run(ctx, req)
}

func (h *Host) Interleave(req runner.Request) (runner.Request, func(*result.Result), string) {
	if h.Runner != nil {
		return req, nil, "the host's runs are another runner's"
	}
	return req, func(*result.Result) {}, ""
}

// VM is a QEMU VM booting a kernel: one boot per trial, so that VM trials
// are as independent as host ones: each is a fresh kernel, with its own
// boot-time layout, caches and timer calibration.
type VM struct {
	Target *vm.Target
	// CacheDir is the kernel cache; "" is the user's default.
	CacheDir string
	// Jobs, in virtual time, bounds the boots of a Run that run at once
	// (and, in rounds, the targets' trials of a round); 0 is the CPUs.
	// In real time boots run one at a time: each would measure the others.
	Jobs int
	// skipped are the scenarios Prepare passed over (SkipUnsupported),
	// which Run records on its Result and says once (skipsTold).
	skipped   []result.Skipped
	skipsTold bool
	mu        sync.Mutex
	setup     *vm.Setup // the target's settings resolved (Setup)
}

func (v *VM) Name() string { return v.Target.Name }

// Setup is how v boots: its settings resolved once, the first time it is
// asked (by Prepare, or by CheckClocks before it), and changed only by a
// fallback (fellBack). A setting no VM can have is bad input.
func (v *VM) Setup() (vm.Setup, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.setup == nil {
		s, err := v.Target.Settings.Resolve()
		if errors.As(err, new(*vm.SettingError)) {
			return s, Inputf("target %s: %v", v.Name(), err)
		}
		if err != nil {
			return s, Infra(err)
		}
		v.setup = &s
	}
	return *v.setup, nil
}

// fellBack makes s, the Setup a boot of v fell back to, the Setup of its
// next boots (vm.Machine.FellBack).
func (v *VM) fellBack(s vm.Setup) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.setup = &s
}

func (v *VM) Prepare(req runner.Request) (runner.Request, error) {
	setup, err := v.Setup()
	if err != nil {
		return req, err
	}
	vcpus := setup.VCPUs
	v.skipped, v.skipsTold = nil, false
	if setup.Clock.Virtual() {
		kept := req.Scenarios[:0:0]
		for _, sc := range req.Scenarios {
			why := notInVirtualTime(sc)
			switch {
			case why == "":
				kept = append(kept, sc)
			case req.SkipUnsupported:
				v.skipped = append(v.skipped, result.Skipped{Scenario: sc.Name, Reason: why + "; --clock real measures it"})
			default:
				return req, Inputf("scenario %s cannot be measured in virtual time: %s; give --clock real", sc.Name, why)
			}
		}
		req.Scenarios = kept
	}
	for _, sc := range req.Scenarios {
		if why := sc.HostOnly(); why != "" {
			return req, Inputf("scenario %s cannot run in a VM (%s): run it on the host, without --kernel", sc.Name, why)
		}
		if c := sc.Workload.CPUs; len(c) > 0 && c[len(c)-1] >= vcpus {
			return req, Inputf("scenario %s: workload cpus names CPU %d, but the VM has %d vCPUs (0-%d): give the VM more with --vcpus, or list its CPUs", sc.Name, c[len(c)-1], vcpus, vcpus-1)
		}
	}
	if req.Duration == 0 && !setup.Clock.Virtual() {
		req.Scenarios = lengthenVMTrials(req.Scenarios)
	}
	return req, nil
}

// Run boots the kernel once per trial. Finished trials are kept when a
// later boot fails or is interrupted: the Result returned beside the error
// holds them, marked partial.
func (v *VM) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (*result.Result, error) {
	name := v.Name()
	k, err := v.kernel(ctx, p)
	if err != nil {
		return nil, err
	}
	types, dropTypes := kernelTypesFor(k, func(s string) { p.Line(name + ": " + s) })
	defer dropTypes()
	trials := 0
	for _, s := range req.Scenarios {
		trials = max(trials, req.Resolve(s).Trials)
	}
	if !v.skipsTold {
		for _, sk := range v.skipped {
			p.Line(fmt.Sprintf("%s: %s: skipped: %s", name, sk.Scenario, sk.Reason))
		}
		v.skipsTold = true
	}
	setup, err := v.Setup()
	if err != nil {
		return nil, err
	}
	var seed uint64
	if setup.Clock.Virtual() {
		seed = max(req.Seed, 1)
	}
	// With phases, a boot is a layout's: its trials resume from its
	// saved state one after another.
	phases := 0
	if setup.Clock.Virtual() {
		phases = setup.Asked.Phases
	}
	boots := trials
	if phases > 0 {
		boots = (trials + phases - 1) / phases
	}
	jobs := min(v.jobs(v.Jobs), boots)
	switch {
	case boots > 1 && jobs > 1 && phases > 0:
		p.Line(fmt.Sprintf("%s: %d layouts of up to %d trials, %d at a time (virtual time: the boots do not measure each other)", name, boots, phases, jobs))
	case boots > 1 && jobs > 1:
		p.Line(fmt.Sprintf("%s: %d boots, %d at a time (virtual time: the boots do not measure each other)", name, trials, jobs))
	}
	bs := vmBoots{kernel: k, kernelTypes: types, req: req, trials: trials, jobs: jobs, seed: seed}
	var booted []bootedTrial
	if phases > 0 {
		booted = v.bootLayouts(ctx, bs, phases, p)
	} else {
		booted = v.bootEach(ctx, bs, p)
	}
	// The trials keep their order, and the first error is the one told:
	// the boots it cancelled failed because of it.
	done := newTrialSet(name)
	var first error
	for i, b := range booted {
		switch {
		case b.err != nil && first == nil && !(errors.Is(b.err, context.Canceled) && ctx.Err() == nil):
			first = b.err
		case b.err == nil && b.res != nil && first == nil:
			if err := done.add(fmt.Sprintf("%s boot %d", name, i+1), b.res, b.req.Scenarios); err != nil {
				first = Infra(err)
			}
		}
	}
	res := done.result()
	if res == nil {
		return nil, first
	}
	res.Skipped = append(res.Skipped, v.skipped...)
	if first != nil {
		res.Partial, res.Error = true, first.Error()
	}
	return res, first
}

// kernel resolves the kernel v boots in its cache (kernels.Cache), with
// the cache's progress on p. A spec that names no kernel is bad input.
func (v *VM) kernel(ctx context.Context, p *progress.Reporter) (*kernels.Kernel, error) {
	var cache *kernels.Cache
	var err error
	if v.CacheDir != "" {
		cache = &kernels.Cache{Dir: v.CacheDir}
	} else if cache, err = kernels.DefaultCache(); err != nil {
		return nil, Infra(err)
	}
	cache.Progress = func(s string) { p.Line(v.Name() + ": " + s) }
	k, err := cache.Resolve(ctx, v.Target.Kernel)
	if errors.Is(err, kernels.ErrUnknown) {
		return nil, &InputError{err}
	}
	if err != nil {
		return nil, Infra(err)
	}
	return k, nil
}

// vmBoots is what bootEach boots: trials boots of kernel, each the next
// trial of req, up to jobs at once; boot i (from 0) seeded seed+i, none
// when seed is 0.
type vmBoots struct {
	kernel      *kernels.Kernel
	kernelTypes string
	req         runner.Request
	trials      int
	jobs        int
	seed        uint64
}

// bootedTrial is one boot: the trial it ran and what it gave.
type bootedTrial struct {
	req runner.Request
	res *result.Result
	err error
}

// vmBoot is what one boot boots: kernel, its tracers relocating against
// kernelTypes when set (kernelTypesFor), running req, seeded seed (0 for
// none).
type vmBoot struct {
	kernel      *kernels.Kernel
	kernelTypes string
	req         runner.Request
	seed        uint64
}

// bootEach boots the kernel once per trial of bs, in order, up to bs.jobs
// at once; the first boot that fails cancels those not done.
func (v *VM) bootEach(ctx context.Context, bs vmBoots, p *progress.Reporter) []bootedTrial {
	boots := make([]bootedTrial, bs.trials)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, bs.jobs)
	var wg sync.WaitGroup
	for i := range bs.trials {
		trial := i + 1
		boots[i].req = oneTrial(bs.req, func(s *scenarios.Scenario) bool { return bs.req.Resolve(s).Trials >= trial })
		select {
		case sem <- struct{}{}:
		case <-bctx.Done():
		}
		if bctx.Err() != nil {
			boots[i].err = bctx.Err()
			break
		}
		if bs.trials > 1 {
			p.Status(fmt.Sprintf("%s: boot %d/%d", v.Name(), trial, bs.trials))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var seed uint64
			if bs.seed != 0 {
				seed = bs.seed + uint64(i)
			}
			boots[i].res, boots[i].err = v.boot(bctx, vmBoot{kernel: bs.kernel, kernelTypes: bs.kernelTypes, req: boots[i].req, seed: seed}, p)
			if boots[i].err != nil {
				cancel()
			}
			bootProgress(bs.req, trial, boots[i].res)
		}()
	}
	wg.Wait()
	return boots
}

// bootLayouts boots the kernel once per layout of n trials of bs
// (vm.Settings.Phases), up to bs.jobs layouts at once: layout j (from 0)
// is seeded bs.seed+j, and its trials resume from its state saved at the
// checkpoint, with phase seeds 1 to n (vm.RunPhases). The first layout
// that fails cancels those not done.
func (v *VM) bootLayouts(ctx context.Context, bs vmBoots, n int, p *progress.Reporter) []bootedTrial {
	boots := make([]bootedTrial, bs.trials)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, bs.jobs)
	var wg sync.WaitGroup
	layouts := (bs.trials + n - 1) / n
	for j := range layouts {
		first, count := j*n, min(n, bs.trials-j*n)
		for i := range count {
			trial := first + i + 1
			boots[first+i].req = oneTrial(bs.req, func(s *scenarios.Scenario) bool { return bs.req.Resolve(s).Trials >= trial })
		}
		select {
		case sem <- struct{}{}:
		case <-bctx.Done():
		}
		if bctx.Err() != nil {
			for i := range count {
				boots[first+i].err = bctx.Err()
			}
			break
		}
		if layouts > 1 {
			p.Status(fmt.Sprintf("%s: layout %d/%d, %d trials", v.Name(), j+1, layouts, count))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			phases := make([]uint64, count)
			for i := range phases {
				phases[i] = uint64(i + 1)
			}
			rs, err := v.bootPhases(bctx, vmBoot{kernel: bs.kernel, kernelTypes: bs.kernelTypes, req: boots[first].req, seed: bs.seed + uint64(j)}, phases, p)
			for i := range count {
				b := &boots[first+i]
				switch {
				case i < len(rs):
					b.res = keepScenarios(rs[i], b.req)
					bootProgress(bs.req, first+i+1, b.res)
				case i == len(rs) && err != nil:
					b.err = err
				default:
					b.err = context.Canceled
				}
			}
			if err != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return boots
}

// keepScenarios is res without the scenarios req does not run: a
// layout's boot runs the scenarios of its first trial, and a later trial
// may be past a scenario's trials.
func keepScenarios(res *result.Result, req runner.Request) *result.Result {
	keep := map[string]bool{}
	for _, s := range req.Scenarios {
		keep[s.Name] = true
	}
	out := *res
	out.Scenarios = nil
	for _, s := range res.Scenarios {
		if keep[s.Name] {
			out.Scenarios = append(out.Scenarios, s)
		}
	}
	return &out
}

// bootProgress tells req's progress what the boot of trial measured
// (res, nil when it failed): each scenario's trial finished, or, at the
// first trial, skipped.
func bootProgress(req runner.Request, trial int, res *result.Result) {
	if req.Progress == nil || res == nil {
		return
	}
	event := func(name string) runner.Event {
		e := runner.Event{Scenario: name, Count: len(req.Scenarios), Trial: trial}
		for i, s := range req.Scenarios {
			if s.Name == name {
				e.Index, e.Trials = i+1, req.Resolve(s).Trials
			}
		}
		return e
	}
	for i := range res.Scenarios {
		e := event(res.Scenarios[i].Name)
		e.Phase, e.Measured = runner.PhaseTrial, runner.Measure(&res.Scenarios[i])
		req.Progress(e)
	}
	for _, sk := range res.Skipped {
		if trial == 1 {
			e := event(sk.Scenario)
			e.Phase, e.Detail = runner.PhaseSkipped, sk.Reason
			req.Progress(e)
		}
	}
}

// Independent says why v's trials measure the machine they run on, ""
// when they do not: a VM in virtual time counts its own instructions.
func (v *VM) Independent() string {
	setup, err := v.Setup()
	if err != nil || !setup.Clock.Independent() {
		return fmt.Sprintf("target %s runs in real time, and each trial would measure the others", v.Name())
	}
	return ""
}

// Jobs is how many VMs in virtual time boot at once when asked for want,
// 0 for the CPUs.
func Jobs(want int) int {
	if want <= 0 {
		return runtime.NumCPU()
	}
	return want
}

// jobs is how many boots of v run at once, at most want (0 for the
// CPUs): one in real time.
func (v *VM) jobs(want int) int {
	if v.Independent() != "" {
		return 1
	}
	return max(Jobs(want), 1)
}

// oneTrial is req cut to one trial of each scenario keep keeps, resolved.
func oneTrial(req runner.Request, keep func(*scenarios.Scenario) bool) runner.Request {
	one := req
	one.Scenarios = nil
	for _, s := range req.Scenarios {
		if keep(s) {
			r := req.Resolve(s)
			r.Trials = 1
			one.Scenarios = append(one.Scenarios, r)
		}
	}
	one.Trials = 1
	return one
}

// notInVirtualTime says why s's times mean nothing in virtual time, ""
// when they do: a workload that waits on a disk idles the guest while the
// host writes, and the guest's clock jumps over the wait to its next
// timer (a 1 s trial of fsync-scratch ended after one fdatasync).
func notInVirtualTime(s *scenarios.Scenario) string {
	if s.Workload.Kind == "fsync" {
		return "its workload waits on a disk, and virtual time jumps over the wait to the guest's next timer"
	}
	return ""
}

// vmMinTrial is the shortest trial a VM target runs in real time unless
// --duration says otherwise. Each trial is a boot of its own (4-6 s under TCG here),
// so a longer trial costs a round little, and the tail of a short one
// varies between boots with the emulation: measured here, gates of
// syscall-read on debian 6.1 with pti=on against the same kernel (p50
// 1.8×, p99 1.9×) decided the regression in 2 of 5 runs within the default
// budget with the scenario's 500 ms trials (p99 intervals like [0.74,
// 5.35] after 19 boots a side), and in 5 of 5 with 2 s trials, 4 of them
// at the first look (6 rounds).
const vmMinTrial = 2 * time.Second

// lengthenVMTrials returns the scenarios with trials of at least
// vmMinTrial, copied where changed.
func lengthenVMTrials(ss []*scenarios.Scenario) []*scenarios.Scenario {
	out := make([]*scenarios.Scenario, len(ss))
	for i, s := range ss {
		out[i] = s
		if s.Duration < vmMinTrial {
			c := *s
			c.Duration = vmMinTrial
			out[i] = &c
		}
	}
	return out
}

// deadline is how long a VM on clock may take for req: the scenarios'
// own time, as the clock stretches it (vm.Clock.Deadline).
func deadline(req runner.Request, clock vm.Clock) time.Duration {
	var d time.Duration
	for _, s := range req.Scenarios {
		r := req.Resolve(s)
		d += r.Warmup + time.Duration(r.Trials)*r.Duration
	}
	return clock.Deadline(d)
}

// machine is the machine that boots b, and the request its guest runs.
func (v *VM) machine(b vmBoot) (vm.Machine, vm.GuestRequest, error) {
	setup, err := v.Setup()
	if err != nil {
		return vm.Machine{}, vm.GuestRequest{}, err
	}
	req := b.req
	m := v.Target.Machine(b.kernel, setup)
	m.KernelTypes, m.FellBack, m.Seed = b.kernelTypes, v.fellBack, b.seed
	if m.Deadline == 0 {
		m.Deadline = deadline(req, setup.Clock)
	}
	gr := vm.GuestRequest{SkipUnsupported: req.SkipUnsupported}
	for _, s := range req.Scenarios {
		// One scratch disk, as large as the largest scenario needs.
		m.ScratchDisk = max(m.ScratchDisk, scenarios.ScratchSize(s.Workload))
		raw, err := json.Marshal(req.Resolve(s))
		if err != nil {
			return vm.Machine{}, vm.GuestRequest{}, err
		}
		gr.Scenarios = append(gr.Scenarios, raw)
	}
	return m, gr, nil
}

// boot boots b's kernel once and runs its request in the guest.
func (v *VM) boot(ctx context.Context, b vmBoot, p *progress.Reporter) (*result.Result, error) {
	m, gr, err := v.machine(b)
	if err != nil {
		return nil, err
	}
	res, err := vm.Run(ctx, m, gr, func(s string) { p.Detail(v.Name() + ": " + s) })
	if res != nil {
		res.Target.Name = v.Name()
	}
	if err != nil {
		return nil, Infra(err)
	}
	if err := scenarios.CheckParams(res); err != nil {
		return nil, Infra(fmt.Errorf("vm %s: %w: %w", v.Name(), vm.ErrBadReply, err))
	}
	return res, nil
}

// bootPhases boots b's kernel once, and runs its request's trial from its
// checkpoint once per phase seed of phases (vm.RunPhases). The Results of
// the phases that ran come with an error.
func (v *VM) bootPhases(ctx context.Context, b vmBoot, phases []uint64, p *progress.Reporter) ([]*result.Result, error) {
	m, gr, err := v.machine(b)
	if err != nil {
		return nil, err
	}
	rs, err := vm.RunPhases(ctx, m, gr, phases, func(s string) { p.Detail(v.Name() + ": " + s) })
	for _, r := range rs {
		r.Target.Name = v.Name()
	}
	if err != nil {
		return rs, Infra(err)
	}
	return rs, nil
}

// GuestRun is what tailgate does as PID 1 of a VM: the host's request, with
// the same runner as a host run.
func GuestRun(ctx context.Context, gr vm.GuestRequest, line func(string)) (*result.Result, error) {
	req := runner.Request{
		Trials: gr.Trials, Duration: gr.Duration, Warmup: gr.Warmup, WarmupSet: gr.WarmupSet,
		Target: gr.Target, SkipUnsupported: gr.SkipUnsupported, KernelText: gr.KernelText,
		// A boot is as fresh as a worker process: the guest runs its
		// trials itself.
		InProcess: true,
	}
	if gr.KernelTypes != "" {
		// Without them the tracers relocate against the kernel's own BTF,
		// only slower.
		raw, err := os.ReadFile(gr.KernelTypes)
		if err == nil {
			req.KernelTypes, err = kerneltypes.Load(raw)
		}
		if err != nil {
			line(fmt.Sprintf("the host's cut of the kernel's BTF is unusable (%v); decoding the kernel's own", err))
		}
	}
	for i, raw := range gr.Scenarios {
		var s scenarios.Scenario
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("scenario %d of the request: %w", i, err)
		}
		req.Scenarios = append(req.Scenarios, &s)
	}
	if gr.Phase > 0 {
		// The seeded start phase: the guest idles, and its clock moves
		// on against its tick.
		if err := sleepCtx(ctx, gr.Phase); err != nil {
			return nil, err
		}
		var now unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
		line(fmt.Sprintf("start phase %s: the run starts at %d ns of guest time", gr.Phase, now.Nano()))
	}
	if gr.Checkpoint {
		req.Ready = func(ctx context.Context) error {
			seed, err := vm.Checkpoint(ctx)
			if err != nil {
				return err
			}
			var now unix.Timespec
			unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
			line(fmt.Sprintf("checkpoint passed; phase seed %d, start phase %s: the run goes on at %d ns of guest time", seed, vm.PhaseOf(seed), now.Nano()))
			return nil
		}
	}
	var attaching time.Time
	req.Progress = func(e runner.Event) {
		switch {
		case e.Phase == runner.PhaseTrial && e.Measured != nil:
			line(fmt.Sprintf("%s: trial %d/%d done: %s", e.Scenario, e.Trial, e.Trials, e.Measured.Text(nil)))
		case e.Phase == runner.PhaseAttach:
			attaching = time.Now()
			line(fmt.Sprintf("%s: %s", e.Scenario, e.Phase))
		case e.Phase == runner.PhaseWarmup:
			// What a boot spends loading and attaching, in the guest's
			// own time: instructions in virtual time.
			line(fmt.Sprintf("%s: %s (attached in %.3fs)", e.Scenario, e.Phase, time.Since(attaching).Seconds()))
		case e.Phase == runner.PhaseSkipped:
			line(fmt.Sprintf("%s: skipped: %s", e.Scenario, e.Detail))
		}
	}
	return runner.Run(ctx, req)
}

// sleepCtx sleeps d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run runs every trial spec asks for on t, with progress on p: what a
// run, a stored-baseline gate and each run of a calibration do.
func Run(ctx context.Context, t Target, spec Spec, p *progress.Reporter) (*result.Result, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	asked := spec.request(t.Name())
	req, err := t.Prepare(asked)
	if err != nil {
		return nil, err
	}
	if _, planned := p.Counts(); planned == 0 {
		p.Plan(plannedTrials(asked), "trials")
	}
	// What Prepare passed over (a VM's scenarios that virtual time
	// cannot measure) counts as done, as a skipped scenario does.
	p.Add(plannedTrials(asked) - plannedTrials(req))
	req.Progress = runProgress(req, p)
	return t.Run(ctx, req, p)
}

// ClockOf is the clock t's trials run on: a VM's as its Setup says, the
// host's real time.
func ClockOf(t Target) (vm.Clock, error) {
	switch t := t.(type) {
	case *VM:
		setup, err := t.Setup()
		return setup.Clock, err
	case *Variant:
		return ClockOf(t.Target)
	}
	return vm.RealTime, nil
}

// CheckClocks refuses targets of one comparison that run on different
// clocks: a ratio of virtual to real time measures nothing.
func CheckClocks(targets []Target) error {
	var first vm.Clock
	for i, t := range targets {
		c, err := ClockOf(t)
		if err != nil {
			return err
		}
		if i == 0 {
			first = c
			continue
		}
		if c != first {
			return Inputf("target %s runs in %s time and %s in %s time: one comparison takes one clock; give the VMs --clock %s, or compare VMs with VMs", targets[0].Name(), first, t.Name(), c, vm.ClockReal)
		}
	}
	return nil
}

// Booting names the kernel a round boots, for progress.
func (v *VM) Booting() string { return v.Target.Kernel }
