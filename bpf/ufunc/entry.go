package ufunc

import (
	"debug/elf"
	"encoding/hex"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// endbr64 is the marker an indirect branch must land on under Intel's
// CET (gcc -fcf-protection, Ubuntu's default): a no-op otherwise.
var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

// entryProbes decides where each symbol's entry probe goes and reads the
// instruction its breakpoint replaces, from f, whose functions defined
// maps to their symbols (see functions).
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
func entryProbes(f *elf.File, defined map[string]elf.Symbol, symbols []string) []result.Probe {
	probes := make([]result.Probe, len(symbols))
	for i, name := range symbols {
		probes[i].Symbol = name
		s := defined[name]
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue // an IFUNC: the probe is on its resolver
		}
		code, ok := functionBytes(f, s)
		if !ok {
			continue // code not in the file
		}
		if f.Machine != elf.EM_X86_64 {
			probes[i].Insn = hex.EncodeToString(code[:min(len(code), 4)])
			continue
		}
		if len(code) >= len(endbr64)+1 && string(code[:len(endbr64)]) == string(endbr64) {
			probes[i].Offset = uint64(len(endbr64))
			code = code[len(endbr64):]
		}
		mnemonic, n, emulated := decodeX86(code)
		if n == 0 {
			n = 4 // length unknown: its first bytes
		}
		probes[i].Insn = hex.EncodeToString(code[:min(len(code), n)])
		probes[i].Mnemonic = mnemonic
		probes[i].SingleStepped = !emulated
	}
	return probes
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
