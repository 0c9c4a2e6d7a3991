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
	"strings"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// Errors a caller tests for; each is bad input (tailgate exits 2), not a
// failure to attach, and the errors that are one match
// tracing.ErrBadTarget too.
var (
	// ErrUnknownSymbol: the binary defines no function of that name
	// (*UnknownSymbolError).
	ErrUnknownSymbol = errors.New("no such function in the binary")
	// ErrGoBinary: the binary is a Go program (*GoBinaryError).
	ErrGoBinary = errors.New("Go binaries cannot be traced with uretprobes")
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

// GoBinaryError refuses a Go binary. A uretprobe replaces the return
// address on the stack with one of its own; Go's runtime moves and copies
// goroutine stacks, and walks them for the garbage collector and panics,
// and a planted address there makes it crash ("unexpected return pc"). So
// ufunc does not attach to Go code at all rather than break the program.
type GoBinaryError struct {
	Binary    string
	GoVersion string // as the binary records it, e.g. go1.22.1; may be empty
}

func (e *GoBinaryError) Error() string {
	v := ""
	if e.GoVersion != "" {
		v = " (" + e.GoVersion + ")"
	}
	return fmt.Sprintf("ufunc: %s is a Go binary%s: uretprobes corrupt the stacks Go's runtime moves and walks, so ufunc refuses Go code", e.Binary, v)
}

// Is matches ErrGoBinary and tracing.ErrBadTarget.
func (e *GoBinaryError) Is(target error) bool {
	return target == ErrGoBinary || target == tracing.ErrBadTarget
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

// Check reports whether symbols can be traced in binary, without loading
// anything: binary is an ELF executable or shared library that is not a
// Go program and defines each symbol as a function. It returns binary's
// path (see Resolve) and, from the same read of the file, each symbol's
// entry probe (see entryProbes).
func Check(binary string, symbols []string) (string, []result.Probe, error) {
	if err := validate(symbols); err != nil {
		return "", nil, err
	}
	path, err := Resolve(binary)
	if err != nil {
		return "", nil, err
	}
	f, err := elf.Open(path)
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			err = serr
		}
		return "", nil, &BinaryError{Binary: binary, Err: err}
	}
	defer f.Close()
	if gover, ok := goBinary(path, f); ok {
		return "", nil, &GoBinaryError{Binary: binary, GoVersion: gover}
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
			names := make([]string, 0, len(defined))
			for n := range defined {
				names = append(names, n)
			}
			slices.Sort(names)
			e.Near = suggest.Near(sym, names, 5)
		}
		return "", nil, e
	}
	return path, entryProbes(f, defined, symbols), nil
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
