package symbols

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
)

// vdsoPath is how /proc/PID/maps names the vDSO, the kernel's code mapped
// into every process (clock_gettime, gettimeofday).
const vdsoPath = "[vdso]"

// vdsoOnly returns the mappings of maps that are the vDSO's.
func vdsoOnly(maps []Mapping) []Mapping {
	for _, m := range maps {
		if m.Path == vdsoPath {
			return []Mapping{m}
		}
	}
	return nil
}

// ownVDSO reads the vDSO of this process, which is every process's on
// this kernel: an ELF image of at most a few pages, copied out of memory.
var ownVDSO = func() (*elf.File, error) {
	b, err := vdsoImage()
	if err != nil {
		return nil, err
	}
	return elf.NewFile(bytes.NewReader(b))
}

var vdsoImage = sync.OnceValues(func() ([]byte, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != vdsoPath {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			break
		}
		mem, err := os.Open("/proc/self/mem")
		if err != nil {
			return nil, err
		}
		defer mem.Close()
		b := make([]byte, end-start)
		if _, err := mem.ReadAt(b, int64(start)); err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, errors.New("no vDSO mapped")
})

// goSymbols returns the functions of a Go binary's pclntab as ELF symbols
// (name, address, size), or nil for a file without one.
func goSymbols(f *elf.File) []elf.Symbol {
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	syms := make([]elf.Symbol, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		if fn.Entry == 0 || fn.End <= fn.Entry {
			continue
		}
		syms = append(syms, elf.Symbol{
			Name:  fn.Name,
			Info:  elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC),
			Value: fn.Entry,
			Size:  fn.End - fn.Entry,
		})
	}
	return syms
}
