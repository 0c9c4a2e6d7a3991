// Package symbols names the addresses of evidence stacks: kernel ones from
// /proc/kallsyms or a kernel's System.map, user ones from the Go runtime's
// tables and the ELF symbols of a process's mapped files.
package symbols

import (
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"slices"
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
	ktext   []byte // kallsyms as read: the names of kernel
	kerr    error
	elfs    map[string]*elfSyms
	maps    map[uint32][]Mapping // per process, read once
	kallsym string               // path, for tests
	// core, when set, is the kernel's own text, whose addresses are
	// left for the host to name (see LeaveCore); with modules, the
	// addresses above it too (LeaveModules).
	core    TextRange
	modules bool
	// left, with LeaveOthers, are the mappings of other processes that
	// hold the addresses left as hex, by process; nil without.
	left map[uint32][]Mapping
}

// TextRange is the kernel's own text, [Start, End): _stext to _etext.
type TextRange struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// Contains reports whether addr is in r.
func (r TextRange) Contains(addr uint64) bool { return r.Start <= addr && addr < r.End }

// LeaveCore makes s leave the addresses of the kernel's own text (r)
// unnamed, as hex, for the host to name from the kernel's System.map:
// under emulation, reading and parsing /proc/kallsyms took a guest 0.3-0.45 s
// of its run. kallsyms is then read only for a frame outside r and below
// the stack's leading frames (a module's).
func (s *Symbolizer) LeaveCore(r TextRange) {
	if r.Start < r.End {
		s.core = r
	}
}

// LeaveModules makes s, with LeaveCore, leave the addresses of the
// kernel's modules, above its own text, as hex too: for a process whose
// parent, on the same kernel, has its kallsyms with the modules' symbols
// (SystemMap.Modules). A trial's worker then never reads kallsyms, which
// took it tens of ms in a trial whose evidence held an interrupt
// handler's frame.
func (s *Symbolizer) LeaveModules() { s.modules = true }

// KernelStack names a kernel stack, innermost first. With LeaveCore, the
// leading frames outside the kernel's text (the BPF program that took the
// stack, a trampoline) are dropped, as the host could not name them.
func (s *Symbolizer) KernelStack(ips []uint64) []string {
	if s.core.End != 0 {
		for len(ips) > 0 && !s.core.Contains(ips[0]) {
			ips = ips[1:]
		}
	}
	return s.Frames(ips, false, 0)
}

// Mapping is a file-backed range of a process's address space, as
// /proc/PID/maps lists it.
type Mapping struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
	Off   uint64 `json:"off"`
	Path  string `json:"path"`
}

// LeaveOthers makes s leave the user addresses of processes other than
// this one unnamed, as hex, keeping the mappings that hold them
// (Mappings): a short-lived process (a trial's worker) hands them to a
// long-lived one, which names them with NameUserStack from symbol tables
// it reads once for all, instead of each short-lived one reading them
// again (tens of ms for a large binary such as QEMU's).
func (s *Symbolizer) LeaveOthers() {
	if s.left == nil {
		s.left = map[uint32][]Mapping{}
	}
}

// Mappings returns, by process, the mappings holding the addresses s left
// as hex (LeaveOthers).
func (s *Symbolizer) Mappings() map[uint32][]Mapping {
	if len(s.left) == 0 {
		return nil
	}
	return s.left
}

// NameUserStack names, in place, the frames of a user stack that another
// process's symbolizer left as hex (LeaveOthers), from maps, the
// mappings it kept for the stack's process. Other frames are left as
// they are.
func (s *Symbolizer) NameUserStack(frames []string, maps []Mapping) {
	for i, f := range frames {
		h, ok := strings.CutPrefix(f, "0x")
		if !ok {
			continue
		}
		addr, ok := parseHex([]byte(h))
		if !ok {
			continue
		}
		if name, ok := s.fileSymbol(maps, addr); ok {
			frames[i] = name
		}
	}
}

// ksym is a kernel function's address and where its name starts in the
// kept text of kallsyms: one slice element per symbol and no string each,
// which matters in a guest under emulation (122k symbols; the parse took
// 320 ms there with a string per field).
type ksym struct {
	addr uint64
	name uint32 // offset of the name in Symbolizer.ktext
}

// NewSymbolizer returns a symbolizer; symbols are read on first use.
func NewSymbolizer() *Symbolizer {
	return &Symbolizer{elfs: map[string]*elfSyms{}, maps: map[uint32][]Mapping{}, kallsym: "/proc/kallsyms"}
}

// SystemMap is a kernel's System.map: the addresses of its own text,
// which a guest booted without KASLR runs at; or this kernel's kallsyms,
// which has its modules' too.
type SystemMap struct {
	sym     *Symbolizer
	text    TextRange
	modules bool
}

// ReadSystemMap reads a System.map (the format of /proc/kallsyms).
func ReadSystemMap(path string) (*SystemMap, error) {
	s := NewSymbolizer()
	s.kallsym = path
	s.once.Do(s.loadKernel)
	if s.kerr != nil {
		return nil, s.kerr
	}
	m := &SystemMap{sym: s, modules: bytes.Contains(s.ktext, []byte("\t["))}
	for i := range s.kernel {
		switch s.kname(i) {
		case "_stext":
			m.text.Start = s.kernel[i].addr
		case "_etext":
			m.text.End = s.kernel[i].addr
		}
	}
	if m.text.Start == 0 || m.text.End <= m.text.Start {
		return nil, fmt.Errorf("%s: no _stext/_etext", path)
	}
	return m, nil
}

// Text is the kernel's own text.
func (m *SystemMap) Text() TextRange { return m.text }

// Modules reports whether the map has the symbols of the kernel's modules
// (kallsyms, not a System.map): it names the frames LeaveModules leaves.
func (m *SystemMap) Modules() bool { return m.modules }

// Name names a frame left as hex by LeaveCore (and LeaveModules, when the
// map has the modules); other frames are returned as they are.
func (m *SystemMap) Name(frame string) string {
	h, ok := strings.CutPrefix(frame, "0x")
	if !ok {
		return frame
	}
	addr, ok := parseHex([]byte(h))
	if !ok || !(m.text.Contains(addr) || m.modules && addr >= m.text.End) {
		return frame
	}
	return m.sym.Kernel(addr)
}

// NameStack names the frames of a stack taken with LeaveCore, in place,
// then drops the leading frames of the tracing machinery (TrimTracing).
func (m *SystemMap) NameStack(frames []string) []string {
	for i, f := range frames {
		frames[i] = m.Name(f)
	}
	return TrimTracing(frames)
}

func (s *Symbolizer) loadKernel() {
	b, err := os.ReadFile(s.kallsym)
	if err != nil {
		s.kerr = err
		return
	}
	s.ktext = b
	s.kernel = parseKallsyms(b)
	if len(s.kernel) == 0 {
		s.kerr = fmt.Errorf("%s lists no addresses (kptr_restrict?)", s.kallsym)
	}
}

// parseKallsyms reads the text symbols of kallsyms lines, "ffffffff81000000
// T _stext [module]", sorted by address. Addresses of 0 (hidden by
// kptr_restrict) are left out.
func parseKallsyms(b []byte) []ksym {
	syms := make([]ksym, 0, len(b)/32)
	sorted := true
	for pos := 0; pos < len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[pos:], '\n'); i >= 0 {
			end = pos + i
		}
		line := b[pos:end]
		start := pos
		pos = end + 1
		// address, one space, type, one space, name
		sp := bytes.IndexByte(line, ' ')
		if sp <= 0 || sp+3 >= len(line) || line[sp+2] != ' ' {
			continue
		}
		switch line[sp+1] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		addr, ok := parseHex(line[:sp])
		if !ok || addr == 0 {
			continue
		}
		if n := len(syms); n > 0 && addr < syms[n-1].addr {
			sorted = false
		}
		syms = append(syms, ksym{addr, uint32(start + sp + 3)})
	}
	if !sorted {
		slices.SortStableFunc(syms, func(x, y ksym) int { return cmp.Compare(x.addr, y.addr) })
	}
	return syms
}

// parseHex parses a hexadecimal number of at most 16 digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// kname is the name of s.kernel[i]: up to the end of its line, or the tab
// before a module's name.
func (s *Symbolizer) kname(i int) string {
	b := s.ktext[s.kernel[i].name:]
	if j := bytes.IndexAny(b, "\t\n "); j >= 0 {
		b = b[:j]
	}
	return string(b)
}

// Kernel names a kernel address as function+0xoffset, or hex.
func (s *Symbolizer) Kernel(addr uint64) string {
	if s.core.Contains(addr) || s.modules && s.core.End != 0 && addr >= s.core.End {
		return fmt.Sprintf("0x%x", addr)
	}
	s.once.Do(s.loadKernel)
	i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
	if i < 0 {
		return fmt.Sprintf("0x%x", addr)
	}
	return fmt.Sprintf("%s+0x%x", s.kname(i), addr-s.kernel[i].addr)
}

// User names a user address of process pid.
func (s *Symbolizer) User(pid uint32, addr uint64) string {
	if int(pid) == os.Getpid() {
		if f := runtime.FuncForPC(uintptr(addr)); f != nil {
			return f.Name()
		}
	}
	maps := s.mappings(pid)
	if s.left != nil {
		// The vDSO is the kernel's, the one this process has too: named
		// here, where that kernel runs, not by the process it is left to.
		if name, ok := s.fileSymbol(vdsoOnly(maps), addr); ok {
			return name
		}
		s.leave(pid, addr)
	} else if name, ok := s.fileSymbol(maps, addr); ok {
		return name
	}
	return fmt.Sprintf("0x%x", addr)
}

// leave keeps the mapping of pid that holds addr, for Mappings.
func (s *Symbolizer) leave(pid uint32, addr uint64) {
	for _, m := range s.mappings(pid) {
		if addr < m.Start || addr >= m.End {
			continue
		}
		if !slices.Contains(s.left[pid], m) {
			s.left[pid] = append(s.left[pid], m)
		}
		return
	}
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

// fileSymbol finds addr in a process's mappings and names it from the
// mapped file's symbol table (.symtab, else .dynsym).
func (s *Symbolizer) fileSymbol(maps []Mapping, addr uint64) (string, bool) {
	for _, m := range maps {
		if addr < m.Start || addr >= m.End {
			continue
		}
		es := s.elf(m.Path)
		if es == nil {
			return "", false
		}
		fileOff := addr - m.Start + m.Off
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
func (s *Symbolizer) mappings(pid uint32) []Mapping {
	if ms, ok := s.maps[pid]; ok {
		return ms
	}
	var ms []Mapping
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") && f[5] != vdsoPath {
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
		ms = append(ms, Mapping{Start: start, End: end, Off: off, Path: f[5]})
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
	var f *elf.File
	var err error
	if path == vdsoPath {
		f, err = ownVDSO()
	} else {
		f, err = elf.Open(path)
	}
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		// A stripped Go binary keeps its function table for the
		// runtime's tracebacks: .gopclntab, which debug/gosym reads.
		syms = goSymbols(f)
	}
	if len(syms) == 0 {
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

// tracingFrames begin the frames of the tracer itself: a stack taken in a
// BPF program starts with the program and the tracepoint's glue.
var tracingFrames = []string{"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_trampoline_"}

// TrimTracing drops the leading frames of the tracing machinery.
func TrimTracing(frames []string) []string {
	for len(frames) > 0 {
		machinery := false
		for _, p := range tracingFrames {
			if strings.HasPrefix(frames[0], p) {
				machinery = true
				break
			}
		}
		if !machinery {
			break
		}
		frames = frames[1:]
	}
	return frames
}
