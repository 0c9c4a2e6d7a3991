// Package retsite finds where an x86-64 function returns: the offsets of
// its RET instructions, decoded with golang.org/x/arch/x86/x86asm, so that
// a uprobe can time the function without a uretprobe (which plants a
// return address on the stack; Go's runtime moves and walks goroutine
// stacks and crashes on it). Decode is pure, bytes in and offsets out;
// Functions and Find read an ELF file's symbol table, or a Go binary's
// pclntab when it has no symbol table.
package retsite

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// Exits are the places a function's code leaves it, as offsets from its
// first byte.
type Exits struct {
	// Rets are the RET instructions (near returns: C3, or C2 with a
	// count; with any prefix, the offset is the prefix's).
	Rets []uint64
	// TailCalls are direct jumps, conditional or not, whose target is
	// outside the function: the call the function ends with returns to
	// the function's caller from the other function, past every RET of
	// this one.
	TailCalls []TailCall
}

// TailCall is a direct jump out of the function.
type TailCall struct {
	Offset uint64 // of the jump, from the function's first byte
	Target uint64 // the virtual address it jumps to
}

// DecodeError is an instruction x86asm cannot decode, or decodes at a
// length that puts a branch target of the same function inside it: past
// it, where instructions begin is unknown, and a probe on a byte that is
// not an instruction's first would corrupt the program.
type DecodeError struct {
	Offset uint64 // from the function's first byte
	Bytes  []byte // up to 8 bytes from Offset
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("cannot decode the instruction at +%#x (% x): %v", e.Offset, e.Bytes, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// errMidInstruction is a direct branch of the function to an offset that
// linear decoding found inside an instruction.
var errMidInstruction = errors.New("a branch targets the middle of a decoded instruction")

// Decode decodes code, the whole of one function whose first byte is at
// virtual address addr, instruction by instruction from its first byte,
// and returns its exits.
//
// Code after the function's last instruction (the padding to the next
// function's alignment, INT3 or NOP, when the bounds come from a Go
// pclntab) decodes as instructions that are never run and is not
// mistaken for an exit: it holds no RET and no jump. Data inside a
// function's bytes (hand-written assembly may hold some; compilers put
// jump tables in read-only data) would be decoded as instructions: a
// byte C3 in it would be reported as a RET. Linear decoding is checked
// against the function's own direct branches: each must land on an
// instruction's first byte, or the decoding is out of step and Decode
// fails. Indirect jumps (a switch's jump table, or a tail call through a
// register) are taken to stay in the function: where they go is not in
// the code.
func Decode(code []byte, addr uint64) (Exits, error) {
	var ex Exits
	starts := make(map[uint64]bool)
	var targets []branch
	end := addr + uint64(len(code))
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err == nil && (inst.Op == 0 || inst.Len <= 0) {
			// x86asm returns a truncated instruction as one byte of no
			// operation, without an error.
			err = errors.New("truncated or unknown instruction")
		}
		if err != nil {
			return Exits{}, &DecodeError{Offset: uint64(off), Bytes: code[off:min(off+8, len(code))], Err: err}
		}
		inst.Len = length(inst, code[off:])
		starts[uint64(off)] = true
		switch inst.Op {
		case x86asm.RET:
			ex.Rets = append(ex.Rets, uint64(off))
		case x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
			x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO, x86asm.JS,
			x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
			x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.CALL:
			rel, ok := inst.Args[0].(x86asm.Rel)
			if !ok {
				break // indirect
			}
			target := addr + uint64(off+inst.Len) + uint64(int64(rel))
			if target >= addr && target < end {
				targets = append(targets, branch{uint64(off), target - addr})
			} else if inst.Op != x86asm.CALL {
				ex.TailCalls = append(ex.TailCalls, TailCall{Offset: uint64(off), Target: target})
			}
		}
		off += inst.Len
	}
	for _, b := range targets {
		if !starts[b.target] {
			return Exits{}, &DecodeError{Offset: b.target, Bytes: code[b.target:min(b.target+8, uint64(len(code)))],
				Err: fmt.Errorf("%w (the branch at +%#x)", errMidInstruction, b.from)}
		}
	}
	return ex, nil
}

// branch is a direct branch inside the function: from its offset to the
// target's.
type branch struct{ from, target uint64 }

// length is the length in bytes of inst, decoded from code. x86asm
// v0.33.0 decodes VZEROUPPER and VZEROALL (VEX 0F 77, which have no
// ModRM byte) as if a ModRM byte and its displacement followed, when
// more bytes follow; Go's and glibc's vectorized routines end with a
// VZEROUPPER before their RET. Decoded from no more bytes than it has, it
// has its true length: the shortest prefix of code that decodes as it.
func length(inst x86asm.Inst, code []byte) int {
	if inst.Op != x86asm.VZEROUPPER && inst.Op != x86asm.VZEROALL {
		return inst.Len
	}
	for n := 1; n < inst.Len; n++ {
		if short, err := x86asm.Decode(code[:n], 64); err == nil && short.Op == inst.Op && short.Len == n {
			return n
		}
	}
	return inst.Len
}
