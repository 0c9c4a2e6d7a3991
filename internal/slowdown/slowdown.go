// Package slowdown makes a real slowdown of the kernel paths tailgate's
// tracers time, for proving that a gate catches one: BPF programs of work
// instructions attached to the raw tracepoints where the syscall and sched
// tracers take their end timestamps (sys_exit, sched_switch) and to
// sched_wakeup, so that every syscall and every wakeup on the machine
// really takes longer while they are attached. Programs on one tracepoint
// run in the order they were attached: attached before a trial's tracers
// are, the work falls inside the intervals they time.
//
// It is not part of tailgate's measurement: the gate benchmarks attach it
// around one side's trials, and tools/slowdown holds it around any command.
package slowdown

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// Hooks are the raw tracepoints a Slowdown attaches to.
var Hooks = []string{"sys_exit", "sched_wakeup", "sched_switch"}

// Slowdown is a set of attached work programs; Close detaches them.
type Slowdown struct {
	progs []*ebpf.Program
	links []link.Link
	// on, for a switched slowdown, holds whether the work runs.
	on *ebpf.Map
}

// Attach attaches programs that each run insns dependent ALU instructions
// (about a cycle each) to every hook.
func Attach(insns int) (*Slowdown, error) {
	return attach(insns, false)
}

// AttachSwitched attaches the programs of Attach, off: their work runs
// only while Set(true) holds. Attached once before any tracer, the work
// falls inside every interval the tracers time, whenever it is switched
// on (the slices of an interleaved gate's head).
func AttachSwitched(insns int) (*Slowdown, error) {
	return attach(insns, true)
}

func attach(insns int, switched bool) (*Slowdown, error) {
	if insns < 1 || insns > 900000 {
		return nil, fmt.Errorf("slowdown of %d instructions: want 1 to 900000", insns)
	}
	s := &Slowdown{}
	var prog asm.Instructions
	if switched {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "slowdown_on", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
		if err != nil {
			return nil, fmt.Errorf("slowdown switch: %w", err)
		}
		s.on = m
		prog = asm.Instructions{
			asm.StoreImm(asm.RFP, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "off"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
			asm.JEq.Imm(asm.R1, 0, "off"),
		}
	}
	prog = append(prog, asm.Mov.Imm(asm.R0, 0))
	for range insns {
		prog = append(prog, asm.Add.Imm(asm.R0, 1))
	}
	prog = append(prog, asm.Mov.Imm(asm.R0, 0).WithSymbol("off"), asm.Return())
	for _, hook := range Hooks {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "slowdown", Type: ebpf.RawTracepoint, Instructions: prog, License: "GPL"})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("load slowdown program: %w", err)
		}
		s.progs = append(s.progs, p)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: hook, Program: p})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("attach slowdown to %s: %w", hook, err)
		}
		s.links = append(s.links, l)
	}
	return s, nil
}

// Set switches a switched slowdown's work on or off.
func (s *Slowdown) Set(on bool) error {
	if s.on == nil {
		return errors.New("slowdown: not a switched one")
	}
	v := uint32(0)
	if on {
		v = 1
	}
	return s.on.Update(uint32(0), v, ebpf.UpdateAny)
}

// Close detaches and unloads every program.
func (s *Slowdown) Close() error {
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	for _, p := range s.progs {
		errs = append(errs, p.Close())
	}
	if s.on != nil {
		errs = append(errs, s.on.Close())
	}
	s.links, s.progs, s.on = nil, nil, nil
	return errors.Join(errs...)
}
