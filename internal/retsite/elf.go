package retsite

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
)

// Function is a function of an ELF file: where its code is.
type Function struct {
	Name string
	Addr uint64 // the virtual address of its first byte
	// Size is the symbol's size, or in a Go binary without a symbol
	// table the distance to the next function of its pclntab (the
	// padding between them included).
	Size uint64
	// Offset is the file offset of its first byte: where a uprobe on it
	// is set.
	Offset uint64
	// Pclntab is set when the bounds come from Go's pclntab.
	Pclntab bool
}

// Functions returns the functions f defines that have a size, by name:
// those of its symbol table, then of its dynamic symbol table (the first
// symbol of each name), then, for a Go binary, those of its pclntab that
// neither names. A Go binary stripped of its symbol table (go build
// -ldflags=-s) keeps its pclntab, which the runtime needs; there an
// assembly function and its ABI wrapper share a name, and the name is
// left out (in a symbol table, the assembly one's ends in .abi0).
func Functions(f *elf.File) (map[string]Function, error) {
	fns := make(map[string]Function)
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("symbol table: %w", err)
	}
	dyn, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("dynamic symbol table: %w", err)
	}
	for _, s := range append(syms, dyn...) {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Size == 0 {
			continue
		}
		if _, seen := fns[s.Name]; seen {
			continue
		}
		if off, ok := fileOffset(f, s.Value, s.Size); ok {
			fns[s.Name] = Function{Name: s.Name, Addr: s.Value, Size: s.Size, Offset: off}
		}
	}
	pcln, err := pclntab(f)
	if err != nil || pcln == nil {
		return fns, err
	}
	count := make(map[string]int, len(pcln.Funcs))
	for _, fn := range pcln.Funcs {
		count[fn.Name]++
	}
	for _, fn := range pcln.Funcs {
		if _, seen := fns[fn.Name]; seen || count[fn.Name] > 1 || fn.End <= fn.Entry {
			continue
		}
		if off, ok := fileOffset(f, fn.Entry, fn.End-fn.Entry); ok {
			fns[fn.Name] = Function{Name: fn.Name, Addr: fn.Entry, Size: fn.End - fn.Entry, Offset: off, Pclntab: true}
		}
	}
	return fns, nil
}

// pclntab reads the Go function table of f: nil without one.
func pclntab(f *elf.File) (*gosym.Table, error) {
	sec, text := f.Section(".gopclntab"), f.Section(".text")
	if sec == nil || text == nil {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .gopclntab: %w", err)
	}
	t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("decode .gopclntab: %w", err)
	}
	return t, nil
}

// fileOffset returns the file offset of the size bytes at virtual address
// addr, which an executable segment must hold, all from the file.
func fileOffset(f *elf.File, addr, size uint64) (uint64, bool) {
	if p := segment(f, addr, size); p != nil {
		return addr - p.Vaddr + p.Off, true
	}
	return 0, false
}

// segment returns the executable segment of f that holds the size bytes
// at virtual address addr in the file, or nil.
func segment(f *elf.File, addr, size uint64) *elf.Prog {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
			continue
		}
		if addr >= p.Vaddr && addr-p.Vaddr < p.Filesz && size <= p.Filesz-(addr-p.Vaddr) {
			return p
		}
	}
	return nil
}

// Sites are where the probes of a function go, as file offsets.
type Sites struct {
	Function
	Rets      []uint64   // file offsets of its RETs
	TailCalls []TailCall // offsets from its first byte, as Decode has them
}

// Find reads fn's code from f and returns its sites.
func Find(f *elf.File, fn Function) (Sites, error) {
	if f.Machine != elf.EM_X86_64 {
		return Sites{}, fmt.Errorf("%s: a %s binary; return sites are found in x86-64 code only", fn.Name, f.Machine)
	}
	code, err := Code(f, fn)
	if err != nil {
		return Sites{}, err
	}
	ex, err := Decode(code, fn.Addr)
	if err != nil {
		return Sites{}, fmt.Errorf("%s: %w", fn.Name, err)
	}
	s := Sites{Function: fn, TailCalls: ex.TailCalls}
	for _, r := range ex.Rets {
		s.Rets = append(s.Rets, fn.Offset+r)
	}
	return s, nil
}

// Code reads fn's bytes from f.
func Code(f *elf.File, fn Function) ([]byte, error) {
	p := segment(f, fn.Addr, fn.Size)
	if p == nil || fn.Offset != fn.Addr-p.Vaddr+p.Off {
		return nil, fmt.Errorf("%s: %#x to %#x is not code of the file", fn.Name, fn.Addr, fn.Addr+fn.Size)
	}
	code := make([]byte, fn.Size)
	if _, err := p.ReadAt(code, int64(fn.Addr-p.Vaddr)); err != nil {
		return nil, fmt.Errorf("%s: read its code: %w", fn.Name, err)
	}
	return code, nil
}
