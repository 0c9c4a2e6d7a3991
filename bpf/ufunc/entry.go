package ufunc

import (
	"debug/elf"
	"encoding/hex"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// endbr64 is the marker an indirect branch must land on under Intel's
// CET (gcc -fcf-protection, Ubuntu's default): a no-op otherwise.
var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

// entryProbe decides where the entry probe of function name goes, and
// reads the instruction its breakpoint replaces, from code, the
// function's first bytes, of a machine's instruction set.
//
// The entry probe takes its timestamp before the kernel runs the replaced
// instruction, and the return probe after the function returns, so how
// the kernel runs that instruction is inside every call's measured time.
// On x86-64 it emulates a push, a nop, a call, a jmp or a conditional
// jump; any other instruction it single-steps out of line: a return to
// user space on a copy of it and a debug trap back, 12 µs a call on an
// AMD EPYC VM where an emulated push costs 0.6 µs (BENCHMARKS.md). A
// leading endbr64 is skipped, as the kernel's own kprobes skip it: the
// probe goes on the instruction after it, where the stack is the same, so
// the return probe still finds the return address.
//
// Other machines are recorded with their bytes alone.
func entryProbe(machine elf.Machine, name string, code []byte) result.Probe {
	p := result.Probe{Symbol: name}
	if machine != elf.EM_X86_64 {
		p.Insn = hex.EncodeToString(code[:min(len(code), 4)])
		return p
	}
	if len(code) >= len(endbr64)+1 && string(code[:len(endbr64)]) == string(endbr64) {
		p.Offset = uint64(len(endbr64))
		code = code[len(endbr64):]
	}
	mnemonic, n, emulated := decodeX86(code)
	if n == 0 {
		n = 4 // length unknown: its first bytes
	}
	p.Insn = hex.EncodeToString(code[:min(len(code), n)])
	p.Mnemonic = mnemonic
	p.SingleStepped = !emulated
	return p
}

// goStackCheck is how a Go function with a small frame begins on amd64:
// CMPQ SP, 16(R14), the check of its stack against the goroutine's
// stackguard0, which a JBE to its call of runtime.morestack follows.
var goStackCheck = []byte{0x49, 0x3b, 0x66, 0x10}

// goEntryProbe is entryProbe for a Go function (amd64): past the stack
// check its code begins with, on the JBE the kernel emulates, rather than
// on the CMP it would single-step. Between the two, SP and R14 (the
// probe's key) are the same, and a call that grows its stack comes back
// through both.
func goEntryProbe(name string, code []byte) result.Probe {
	n := len(goStackCheck)
	if len(code) > n+1 && string(code[:n]) == string(goStackCheck) &&
		(code[n] == 0x76 || code[n] == 0x0f && code[n+1] == 0x86) {
		mnemonic, l, emulated := decodeX86(code[n:])
		return result.Probe{Symbol: name, Offset: uint64(n), Insn: hex.EncodeToString(code[n:min(len(code), n+l)]), Mnemonic: mnemonic, SingleStepped: !emulated}
	}
	return entryProbe(elf.EM_X86_64, name, code)
}

// functionBytes returns the first bytes of the function s in f (false
// for the zero Symbol, or code outside the file's sections).
func functionBytes(f *elf.File, s elf.Symbol) ([]byte, bool) {
	if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
		return nil, false
	}
	sec := f.Sections[s.Section]
	if sec.Type != elf.SHT_PROGBITS || s.Value < sec.Addr || s.Value >= sec.Addr+sec.Size {
		return nil, false
	}
	buf := make([]byte, min(16, sec.Addr+sec.Size-s.Value))
	if n, err := sec.ReadAt(buf, int64(s.Value-sec.Addr)); n > 0 && (err == nil || n == len(buf)) {
		return buf[:n], true
	}
	return nil, false
}

// decodeX86 names the x86-64 instruction code begins with, as far as the
// probe cares: its mnemonic when known (or ""), its length when known (or
// 0), and whether the kernel's uprobes emulate it rather than single-step
// it (arch/x86/kernel/uprobes.c: branches and push; nops on current
// kernels, measured on 6.18).
func decodeX86(code []byte) (mnemonic string, n int, emulated bool) {
	if len(code) == 0 {
		return "", 0, false
	}
	b := code[0]
	switch {
	case b >= 0x50 && b <= 0x57:
		return "push", 1, true
	case b == 0x41 && len(code) > 1 && code[1] >= 0x50 && code[1] <= 0x57:
		return "push", 2, true
	case b == 0x90:
		return "nop", 1, true
	case b == 0xe8:
		return "call", 5, true
	case b == 0xe9:
		return "jmp", 5, true
	case b == 0xeb:
		return "jmp", 2, true
	case b >= 0x70 && b <= 0x7f:
		return "jcc", 2, true
	case b == 0x0f && len(code) > 1 && code[1] >= 0x80 && code[1] <= 0x8f:
		return "jcc", 6, true
	case b == 0x0f && len(code) > 1 && code[1] == 0x1f,
		b == 0x66 && len(code) > 2 && code[1] == 0x0f && code[2] == 0x1f:
		return "nop", 0, true
	case len(code) >= 4 && string(code[:4]) == string(endbr64):
		return "endbr64", 4, false
	}
	// Not emulated: name the usual first instructions of a function that
	// does not begin with a push, past a REX prefix, and their length
	// when the operand is a register.
	p, op := 0, code
	if b&0xf0 == 0x40 && len(code) > 1 {
		p, op = 1, code[1:]
	}
	reg := len(op) > 1 && op[1]>>6 == 3 // ModRM names a register
	switch op[0] {
	case 0x31, 0x33, 0x89, 0x8b, 0x85, 0x39, 0x3b:
		name := map[byte]string{0x31: "xor", 0x33: "xor", 0x89: "mov", 0x8b: "mov", 0x85: "test", 0x39: "cmp", 0x3b: "cmp"}[op[0]]
		if reg {
			return name, p + 2, false
		}
		return name, 0, false
	case 0x8d:
		return "lea", 0, false
	case 0xc7:
		return "mov", 0, false
	case 0x83, 0x81:
		if len(op) > 1 {
			name := map[byte]string{0: "add", 5: "sub", 7: "cmp"}[(op[1]>>3)&7]
			if name != "" && reg {
				return name, p + map[byte]int{0x83: 3, 0x81: 6}[op[0]], false
			}
			return name, 0, false
		}
	}
	if op[0] >= 0xb8 && op[0] <= 0xbf {
		if p == 1 && b&0x08 != 0 {
			return "mov", p + 9, false // movabs
		}
		return "mov", p + 5, false
	}
	return "", 0, false
}
