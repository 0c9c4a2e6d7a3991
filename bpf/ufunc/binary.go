package ufunc

import (
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/retsite"
	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// Errors a caller tests for; each is bad input (tailgate exits 2), not a
// failure to attach, and the errors that are one match
// tracing.ErrBadTarget too.
var (
	// ErrUnknownSymbol: the binary defines no function of that name
	// (*UnknownSymbolError).
	ErrUnknownSymbol = errors.New("no such function in the binary")
	// ErrGoBinary: the binary is a Go program ufunc cannot time
	// (*GoBinaryError).
	ErrGoBinary = errors.New("Go binary not supported")
	// ErrReturns: the returns of a Go function cannot be found, or it
	// leaves by other ways too (*ReturnsError).
	ErrReturns = errors.New("cannot find where the function returns")
	// ErrNotExecutable: the binary is missing or not an ELF file
	// (*BinaryError).
	ErrNotExecutable = errors.New("not an ELF executable or library")
)

// UnknownSymbolError is a symbol the binary does not define as a function.
type UnknownSymbolError struct {
	Binary, Symbol string
	// Imported is set when the binary has the symbol undefined: it calls
	// the function from a shared library (Needed lists its libraries).
	Imported bool
	Needed   []string
	Near     []string // defined functions of near names, nearest first
}

func (e *UnknownSymbolError) Error() string {
	if e.Imported {
		msg := fmt.Sprintf("ufunc: %s does not define %s, it imports it; trace the library that does", e.Binary, e.Symbol)
		if len(e.Needed) > 0 {
			msg += " (it needs " + strings.Join(e.Needed, ", ") + ")"
		}
		return msg
	}
	msg := fmt.Sprintf("ufunc: %s has no function %q", e.Binary, e.Symbol)
	if len(e.Near) > 0 {
		return msg + "; near: " + strings.Join(e.Near, ", ")
	}
	return msg + " in its symbol tables"
}

// Is matches ErrUnknownSymbol and tracing.ErrBadTarget.
func (e *UnknownSymbolError) Is(target error) bool {
	return target == ErrUnknownSymbol || target == tracing.ErrBadTarget
}

// GoBinaryError refuses a Go binary whose functions ufunc cannot time.
// A Go function is timed from its entry to its RET instructions with the
// goroutine as the key (see ufunc.bpf.c): that takes x86-64 code and Go's
// register ABI (Go 1.17), which keeps the goroutine in R14. A uretprobe,
// as C functions get, would replace the return address on the stack, and
// Go's runtime moves and walks goroutine stacks and crashes on it
// ("unexpected return pc").
type GoBinaryError struct {
	Binary    string
	GoVersion string // as the binary records it, e.g. go1.22.1; may be empty
	Reason    string // what rules it out
}

func (e *GoBinaryError) Error() string {
	v := ""
	if e.GoVersion != "" {
		v = " (" + e.GoVersion + ")"
	}
	return fmt.Sprintf("ufunc: %s is a Go binary%s %s; ufunc times Go functions of amd64 binaries built by Go 1.17 or later", e.Binary, v, e.Reason)
}

// Is matches ErrGoBinary and tracing.ErrBadTarget.
func (e *GoBinaryError) Is(target error) bool {
	return target == ErrGoBinary || target == tracing.ErrBadTarget
}

// ReturnsError is a Go function whose RET instructions cannot all be
// found (its code does not decode), that has none, or that also leaves
// by a tail call, which returns to its caller from another function:
// timed at its RETs, its calls that leave the other way would be lost.
//
// An assembly function (ABI0, its symbol's name ends in .abi0) is refused
// with it too: it need not keep the goroutine in R14, where its return
// probes look for it.
type ReturnsError struct {
	Binary, Symbol string
	Err            error  // the decoding's; nil for the others
	TailCall       string // the function a tail call goes to, or its address
	Offset         uint64 // of the tail call, from the function's entry
	Assembly       bool
}

func (e *ReturnsError) Error() string {
	switch {
	case e.Assembly:
		return fmt.Sprintf("ufunc: %s:%s is an assembly function (ABI0), which need not keep the goroutine in R14 to its return; trace the Go function that calls it", e.Binary, e.Symbol)
	case e.Err != nil:
		return fmt.Sprintf("ufunc: %s:%s: %v, so where it returns is unknown; trace a function it calls", e.Binary, e.Symbol, e.Err)
	case e.TailCall != "":
		return fmt.Sprintf("ufunc: %s:%s leaves by a tail call to %s at +%#x, not through a RET; trace %s", e.Binary, e.Symbol, e.TailCall, e.Offset, e.TailCall)
	}
	return fmt.Sprintf("ufunc: %s:%s has no RET instruction (it never returns); trace a function it calls", e.Binary, e.Symbol)
}

func (e *ReturnsError) Unwrap() error { return e.Err }

// Is matches ErrReturns and tracing.ErrBadTarget.
func (e *ReturnsError) Is(target error) bool {
	return target == ErrReturns || target == tracing.ErrBadTarget
}

// BinaryError is a binary that cannot be opened as ELF.
type BinaryError struct {
	Binary string
	Err    error
}

func (e *BinaryError) Error() string { return fmt.Sprintf("ufunc: binary %s: %v", e.Binary, e.Err) }

func (e *BinaryError) Unwrap() error { return e.Err }

// Is matches ErrNotExecutable and tracing.ErrBadTarget.
func (e *BinaryError) Is(target error) bool {
	return target == ErrNotExecutable || target == tracing.ErrBadTarget
}

// Resolve returns the path of binary: as given when it names a file (it
// has a slash); for a shared library's name (libc.so.6), the library in
// $LD_LIBRARY_PATH or the system's library directories; else the
// executable of that name in $PATH.
func Resolve(binary string) (string, error) {
	if binary == "" {
		return "", &BinaryError{Binary: binary, Err: errors.New("no binary configured")}
	}
	if strings.Contains(binary, "/") {
		return binary, nil
	}
	if isLibrary(binary) {
		dirs := filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))
		for _, d := range append(dirs, libraryDirs...) {
			p := filepath.Join(d, binary)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
		return "", &BinaryError{Binary: binary, Err: fmt.Errorf("no such library in $LD_LIBRARY_PATH or %s; give its path", strings.Join(libraryDirs, ", "))}
	}
	p, err := exec.LookPath(binary)
	if err != nil {
		return "", &BinaryError{Binary: binary, Err: err}
	}
	return p, nil
}

// libraryDirs are where Debian, Fedora and Alpine keep shared libraries.
var libraryDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
}

// isLibrary reports whether name is a shared library's file name:
// libNAME.so or libNAME.so.VERSION.
func isLibrary(name string) bool {
	return strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.")
}

// Target is where the probes of a tracer go, as Check found them.
type Target struct {
	Path string // the binary's, see Resolve
	// Probes are each symbol's entry probe (see entryProbes).
	Probes []result.Probe
	// Go is set for a Go binary: each symbol's entry and RETs, as file
	// offsets, in the order of the symbols. Nil for other binaries,
	// whose functions get a uprobe and a uretprobe each.
	Go []GoSites
}

// GoSites are the file offsets a Go function's probes go to.
type GoSites struct {
	Entry uint64 // the function's first byte, plus Probes[i].Offset
	Rets  []uint64
}

// Check reports whether symbols can be traced in binary, without loading
// anything: binary is an ELF executable or shared library that defines
// each symbol as a function, and each of a Go binary's returns through
// RET instructions only. It returns where the probes go, from one read
// of the file.
func Check(binary string, symbols []string) (*Target, error) {
	if err := validate(symbols); err != nil {
		return nil, err
	}
	path, err := Resolve(binary)
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(path)
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			err = serr
		}
		return nil, &BinaryError{Binary: binary, Err: err}
	}
	defer f.Close()
	if gover, ok := goBinary(path, f); ok {
		return checkGo(binary, path, gover, f, symbols)
	}
	defined, imported := functions(f)
	for _, sym := range symbols {
		if _, ok := defined[sym]; ok {
			continue
		}
		e := &UnknownSymbolError{Binary: binary, Symbol: sym, Imported: imported[sym]}
		if e.Imported {
			e.Needed, _ = f.ImportedLibraries()
		} else {
			e.Near = near(sym, defined)
		}
		return nil, e
	}
	probes := make([]result.Probe, len(symbols))
	for i, sym := range symbols {
		s := defined[sym]
		probes[i].Symbol = sym
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue // an IFUNC: the probe is on its resolver
		}
		if code, ok := functionBytes(f, s); ok {
			probes[i] = entryProbe(f.Machine, sym, code)
		}
	}
	return &Target{Path: path, Probes: probes}, nil
}

// checkGo is Check for a Go binary, recorded as made by gover.
func checkGo(binary, path, gover string, f *elf.File, symbols []string) (*Target, error) {
	if reason := goUnsupported(path, gover, f); reason != "" {
		return nil, &GoBinaryError{Binary: binary, GoVersion: gover, Reason: reason}
	}
	fns, err := retsite.Functions(f)
	if err != nil {
		return nil, &BinaryError{Binary: binary, Err: err}
	}
	t := &Target{Path: path, Probes: make([]result.Probe, len(symbols)), Go: make([]GoSites, len(symbols))}
	for i, sym := range symbols {
		fn, ok := fns[sym]
		if !ok {
			return nil, &UnknownSymbolError{Binary: binary, Symbol: sym, Near: near(sym, fns)}
		}
		sites, err := retsite.Find(f, fn)
		if err != nil {
			return nil, &ReturnsError{Binary: binary, Symbol: sym, Err: errors.Unwrap(err)}
		}
		if len(sites.TailCalls) > 0 {
			tc := sites.TailCalls[0]
			return nil, &ReturnsError{Binary: binary, Symbol: sym, TailCall: nameAt(fns, tc.Target), Offset: tc.Offset}
		}
		if len(sites.Rets) == 0 {
			return nil, &ReturnsError{Binary: binary, Symbol: sym}
		}
		if strings.HasSuffix(sym, ".abi0") {
			return nil, &ReturnsError{Binary: binary, Symbol: sym, Assembly: true}
		}
		code, err := retsite.Code(f, fn)
		if err != nil {
			return nil, &BinaryError{Binary: binary, Err: err}
		}
		t.Probes[i] = goEntryProbe(sym, code)
		t.Go[i] = GoSites{Entry: fn.Offset + t.Probes[i].Offset, Rets: sites.Rets}
	}
	return t, nil
}

// goUnsupported says why ufunc cannot time the Go binary at path, made by
// gover (empty when unknown), or "".
func goUnsupported(path, gover string, f *elf.File) string {
	if f.Machine != elf.EM_X86_64 {
		return "for " + f.Machine.String()
	}
	if gover == "" {
		// Without build information, the pclntab's magic number tells
		// Go 1.18 and later (0xfffffff0, 0xfffffff1) from older ones.
		sec := f.Section(".gopclntab")
		if sec == nil {
			return "whose Go version is unknown"
		}
		var magic [4]byte
		if _, err := sec.ReadAt(magic[:], 0); err != nil || magic[3] != 0xff || magic[2] != 0xff || magic[1] != 0xff || (magic[0] != 0xf0 && magic[0] != 0xf1) {
			return "whose Go version is unknown (its pclntab is not Go 1.18's or later)"
		}
		return ""
	}
	if !goAtLeast(gover, 17) {
		return "built by a Go older than 1.17, without the register ABI"
	}
	if bi, err := buildinfo.ReadFile(path); err == nil {
		for _, s := range bi.Settings {
			if s.Key == "GOEXPERIMENT" && strings.Contains(s.Value, "noregabi") {
				return "built with GOEXPERIMENT=noregabi"
			}
		}
	}
	return ""
}

// goAtLeast reports whether the Go version v (go1.22.1, devel go1.23-...)
// is 1.minor or later; a version it cannot read is taken to be recent.
func goAtLeast(v string, minor int) bool {
	i := strings.Index(v, "go1.")
	if i < 0 {
		return true
	}
	rest := v[i+len("go1."):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	m, err := strconv.Atoi(rest[:n])
	return err != nil || m >= minor
}

// near returns the names of defined near sym, nearest first.
func near[V any](sym string, defined map[string]V) []string {
	names := make([]string, 0, len(defined))
	for n := range defined {
		names = append(names, n)
	}
	slices.Sort(names)
	return suggest.Near(sym, names, 5)
}

// nameAt names the function at address addr, or gives the address.
func nameAt(fns map[string]retsite.Function, addr uint64) string {
	for _, fn := range fns {
		if fn.Addr == addr {
			return fn.Name
		}
	}
	return fmt.Sprintf("%#x", addr)
}

// validate checks the list itself.
func validate(symbols []string) error {
	if len(symbols) == 0 {
		return errors.New("ufunc: no symbols configured")
	}
	if len(symbols) > maxSymbols {
		return fmt.Errorf("ufunc: %d symbols, at most %d per tracer", len(symbols), maxSymbols)
	}
	for i, s := range symbols {
		if s == "" || strings.ContainsAny(s, " \t\n:") {
			return fmt.Errorf("ufunc: %q is not a symbol name", s)
		}
		if slices.Contains(symbols[:i], s) {
			return fmt.Errorf("ufunc: symbol %q listed twice", s)
		}
	}
	return nil
}

// goBinary reports whether f is a Go program (or a library built by Go),
// from its build information or, stripped of it, its Go sections.
func goBinary(path string, f *elf.File) (version string, ok bool) {
	if bi, err := buildinfo.ReadFile(path); err == nil {
		return bi.GoVersion, true
	}
	for _, name := range []string{".go.buildinfo", ".gopclntab", ".note.go.buildid"} {
		if f.Section(name) != nil {
			return "", true
		}
	}
	return "", false
}

// functions returns the functions f defines, each its first symbol, and
// those it imports, from its symbol table and its dynamic symbol table.
func functions(f *elf.File) (defined map[string]elf.Symbol, imported map[string]bool) {
	defined, imported = map[string]elf.Symbol{}, map[string]bool{}
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
		case elf.STT_NOTYPE:
			if s.Section != elf.SHN_UNDEF {
				continue
			}
		default:
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Value == 0 {
			imported[s.Name] = true
			continue
		}
		if _, seen := defined[s.Name]; !seen {
			defined[s.Name] = s
		}
	}
	for n := range defined {
		delete(imported, n)
	}
	return defined, imported
}
