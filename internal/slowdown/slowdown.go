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
}

// Attach attaches programs that each run insns dependent ALU instructions
// (about a cycle each) to every hook.
func Attach(insns int) (*Slowdown, error) {
	if insns < 1 || insns > 900000 {
		return nil, fmt.Errorf("slowdown of %d instructions: want 1 to 900000", insns)
	}
	prog := asm.Instructions{asm.Mov.Imm(asm.R0, 0)}
	for range insns {
		prog = append(prog, asm.Add.Imm(asm.R0, 1))
	}
	prog = append(prog, asm.Mov.Imm(asm.R0, 0), asm.Return())
	s := &Slowdown{}
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

// Close detaches and unloads every program.
func (s *Slowdown) Close() error {
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	for _, p := range s.progs {
		errs = append(errs, p.Close())
	}
	s.links, s.progs = nil, nil
	return errors.Join(errs...)
}
