package tracing

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Symbolizer names the addresses of evidence stacks: the kernel's from
// /proc/kallsyms (read where the event happened, so a guest symbolizes
// with its own kernel's symbols), user addresses of this process from the
// Go runtime's tables, and of other live processes from their mapped ELF
// files' symbol tables.
type Symbolizer struct {
	once    sync.Once
	kernel  []ksym
	kerr    error
	elfs    map[string]*elfSyms
	maps    map[uint32][]mapping // per process, read once
	kallsym string               // path, for tests
}

// mapping is a file-backed range of a process's address space.
type mapping struct {
	start, end, off uint64
	path            string
}

type ksym struct {
	addr uint64
	name string
}

// NewSymbolizer returns a symbolizer; symbols are read on first use.
func NewSymbolizer() *Symbolizer {
	return &Symbolizer{elfs: map[string]*elfSyms{}, maps: map[uint32][]mapping{}, kallsym: "/proc/kallsyms"}
}

func (s *Symbolizer) loadKernel() {
	f, err := os.Open(s.kallsym)
	if err != nil {
		s.kerr = err
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// "ffffffff81000000 T _stext [module]"
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		switch fields[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr == 0 {
			continue // 0: addresses hidden (kptr_restrict)
		}
		s.kernel = append(s.kernel, ksym{addr, fields[2]})
	}
	if s.kerr = sc.Err(); s.kerr == nil && len(s.kernel) == 0 {
		s.kerr = fmt.Errorf("%s lists no addresses (kptr_restrict?)", s.kallsym)
	}
	sort.Slice(s.kernel, func(i, j int) bool { return s.kernel[i].addr < s.kernel[j].addr })
}

// Kernel names a kernel address as function+0xoffset, or hex.
func (s *Symbolizer) Kernel(addr uint64) string {
	s.once.Do(s.loadKernel)
	i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
	if i < 0 {
		return fmt.Sprintf("0x%x", addr)
	}
	return fmt.Sprintf("%s+0x%x", s.kernel[i].name, addr-s.kernel[i].addr)
}

// User names a user address of process pid.
func (s *Symbolizer) User(pid uint32, addr uint64) string {
	if int(pid) == os.Getpid() {
		if f := runtime.FuncForPC(uintptr(addr)); f != nil {
			return f.Name()
		}
	}
	if name, ok := s.elfSymbol(pid, addr); ok {
		return name
	}
	return fmt.Sprintf("0x%x", addr)
}

// Frames names a stack's addresses; user frames belong to pid.
func (s *Symbolizer) Frames(ips []uint64, user bool, pid uint32) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		if user {
			out = append(out, s.User(pid, ip))
		} else {
			out = append(out, s.Kernel(ip))
		}
	}
	return out
}

type elfSyms struct {
	loads []elf.ProgHeader
	syms  []elf.Symbol // functions, by address
}

// elfSymbol finds addr in pid's mappings and names it from the mapped
// file's symbol table (.symtab, else .dynsym).
func (s *Symbolizer) elfSymbol(pid uint32, addr uint64) (string, bool) {
	for _, m := range s.mappings(pid) {
		if addr < m.start || addr >= m.end {
			continue
		}
		es := s.elf(m.path)
		if es == nil {
			return "", false
		}
		fileOff := addr - m.start + m.off
		for _, p := range es.loads {
			if fileOff < p.Off || fileOff >= p.Off+p.Filesz {
				continue
			}
			vaddr := fileOff - p.Off + p.Vaddr
			i := sort.Search(len(es.syms), func(i int) bool { return es.syms[i].Value > vaddr }) - 1
			if i >= 0 && (es.syms[i].Size == 0 || vaddr < es.syms[i].Value+es.syms[i].Size) {
				return fmt.Sprintf("%s+0x%x", es.syms[i].Name, vaddr-es.syms[i].Value), true
			}
		}
		return "", false
	}
	return "", false
}

// mappings are pid's file-backed mappings, from /proc/PID/maps, read once
// per symbolizer (none once the process is gone).
func (s *Symbolizer) mappings(pid uint32) []mapping {
	if ms, ok := s.maps[pid]; ok {
		return ms
	}
	var ms []mapping
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		ms = append(ms, mapping{start, end, off, f[5]})
	}
	s.maps[pid] = ms
	return ms
}

func (s *Symbolizer) elf(path string) *elfSyms {
	if es, ok := s.elfs[path]; ok {
		return es
	}
	var es *elfSyms
	defer func() { s.elfs[path] = es }()
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	es = &elfSyms{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			es.loads = append(es.loads, p.ProgHeader)
		}
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && sym.Value != 0 {
			es.syms = append(es.syms, sym)
		}
	}
	sort.Slice(es.syms, func(i, j int) bool { return es.syms[i].Value < es.syms[j].Value })
	return es
}
