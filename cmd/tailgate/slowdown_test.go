package main

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// slowdown is a real slowdown of the paths tailgate's tracers time, for
// proving that the gate catches one: BPF programs of work instructions
// attached to the raw tracepoints where the syscall and sched tracers take
// their end timestamps (sys_exit, sched_switch) and to sched_wakeup, so
// that every traced syscall and every wakeup really takes longer while it
// is attached. Programs on one tracepoint run in the order they were
// attached, and the slowdown is attached before a trial's worker attaches
// its tracers: its work falls inside the intervals they time.
type slowdown struct {
	progs []*ebpf.Program
	links []link.Link
}

// slowdownHooks are the raw tracepoints a slowdown attaches to.
var slowdownHooks = []string{"sys_exit", "sched_wakeup", "sched_switch"}

// attachSlowdown attaches programs that each run insns dependent ALU
// instructions (about a cycle each) to every slowdownHook.
func attachSlowdown(insns int) (*slowdown, error) {
	prog := asm.Instructions{asm.Mov.Imm(asm.R0, 0)}
	for range insns {
		prog = append(prog, asm.Add.Imm(asm.R0, 1))
	}
	prog = append(prog, asm.Mov.Imm(asm.R0, 0), asm.Return())
	s := &slowdown{}
	for _, hook := range slowdownHooks {
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

func (s *slowdown) Close() error {
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	for _, p := range s.progs {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// getppidCost is the median time of a getppid over rounds of calls.
func getppidCost() time.Duration {
	const calls = 20000
	var best []time.Duration
	for range 9 {
		start := time.Now()
		for range calls {
			unix.Getppid()
		}
		best = append(best, time.Since(start)/calls)
	}
	for i := range best {
		for j := i + 1; j < len(best); j++ {
			if best[j] < best[i] {
				best[i], best[j] = best[j], best[i]
			}
		}
	}
	return best[len(best)/2]
}

// The benchmark's instrument must really slow the traced path: a syscall
// with the slowdown attached takes longer, and more so with more work.
func TestSlowdownSlowsSyscalls(t *testing.T) {
	before := getppidCost()
	s, err := attachSlowdown(2000)
	if err != nil {
		t.Fatal(err)
	}
	during := getppidCost()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := getppidCost()
	t.Logf("getppid: %s before, %s with 2000 instructions on sys_exit, %s after", before, during, after)
	if during < before+50*time.Nanosecond || during < after+50*time.Nanosecond {
		t.Errorf("getppid took %s with the slowdown, %s before and %s after: want ≥ 50 ns more", during, before, after)
	}
}
