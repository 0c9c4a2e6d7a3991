package symbols

import (
	"bufio"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// A C program that prints the run-time addresses of two of its functions
// (one static, one a callee of it), and of the vDSO's ELF header, then
// waits to be killed.
const cProgram = `#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

__attribute__((noinline)) static int callee(int x) { return x * 3 + 1; }
__attribute__((noinline)) int handler(int x) { return callee(x) + 2; }

int main(void)
{
	printf("%lx %lx %lx\n", (unsigned long)handler, (unsigned long)callee + 1,
	       (unsigned long)getauxval(AT_SYSINFO_EHDR));
	fflush(stdout);
	pause();
	return handler(1);
}
`

// A Go program that prints the run-time addresses of two of its
// functions, then waits to be killed.
const goProgram = `package main

import (
	"fmt"
	"reflect"
	"time"
)

//go:noinline
func handler(x int) int { return x*3 + 1 }

//go:noinline
func callee(x int) int { return handler(x) + 2 }

func main() {
	fmt.Printf("%x %x 0\n", reflect.ValueOf(handler).Pointer(), reflect.ValueOf(callee).Pointer()+1)
	time.Sleep(time.Hour)
	fmt.Println(callee(1))
}
`

// started runs bin and returns its pid and the three numbers it printed.
func started(t *testing.T, bin string) (uint32, [3]uint64) {
	t.Helper()
	cmd := exec.Command(bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no addresses: %v", bin, err)
	}
	var got [3]uint64
	f := strings.Fields(line)
	for i := range got {
		if got[i], err = strconv.ParseUint(f[i], 16, 64); err != nil {
			t.Fatalf("%s printed %q", bin, line)
		}
	}
	go io.Copy(io.Discard, out)
	return uint32(cmd.Process.Pid), got
}

func build(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return filepath.Join(dir, name)
}

// wantFrame checks that s names addr of pid as function fn (+ offset).
func wantFrame(t *testing.T, s *Symbolizer, pid uint32, addr uint64, fn string) {
	t.Helper()
	got := s.User(pid, addr)
	name, _, _ := strings.Cut(got, "+0x")
	if name != fn {
		t.Errorf("User(%d, %#x) = %q, want %s+...", pid, addr, got, fn)
	}
}

// The symbolizer names a C binary's functions at their run-time
// addresses, for a position-independent executable (loaded at a random
// base) and a fixed one, and a frame in the vDSO.
func TestCBinaryFunctions(t *testing.T) {
	testenv.Need(t, testenv.Tool("cc", "apt-get install gcc"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(cProgram), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pie", "no-pie"} {
		t.Run(kind, func(t *testing.T) {
			bin := build(t, dir, kind, "cc", "-O2", "-f"+strings.TrimPrefix(kind, "no-"), "-"+kind, "-o", kind, "p.c")
			if kind == "no-pie" {
				bin = build(t, dir, kind, "cc", "-O2", "-fno-pie", "-no-pie", "-o", kind, "p.c")
			}
			pid, addrs := started(t, bin)
			s := NewSymbolizer()
			wantFrame(t, s, pid, addrs[0], "handler")
			wantFrame(t, s, pid, addrs[1], "callee")

			// The vDSO: its clock_gettime, by its offset in this
			// process's copy (the same kernel's).
			f, err := ownVDSO()
			if err != nil {
				t.Fatal(err)
			}
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			var off uint64
			for _, sym := range syms {
				if strings.HasSuffix(sym.Name, "clock_gettime") {
					off = sym.Value
				}
			}
			if off == 0 {
				t.Fatal("no clock_gettime in this process's vDSO")
			}
			got := s.User(pid, addrs[2]+off+4)
			if name, _, _ := strings.Cut(got, "+0x"); !strings.HasSuffix(name, "clock_gettime") {
				t.Errorf("a vDSO frame named %q, want clock_gettime", got)
			}
		})
	}
}

// The symbolizer names a Go binary's functions: from its ELF symbols, and
// stripped of them (go build -ldflags=-s), from its pclntab; PIE or not.
func TestGoBinaryFunctions(t *testing.T) {
	testenv.Need(t, testenv.Tool("go", "install Go"))
	dir := t.TempDir()
	for name, text := range map[string]string{"main.go": goProgram, "go.mod": "module p\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"exe", nil},
		{"pie", []string{"-buildmode=pie"}},
		{"stripped", []string{"-ldflags=-s -w"}},
		{"stripped-pie", []string{"-buildmode=pie", "-ldflags=-s -w"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"go", "build", "-o", c.name}, c.flags...)
			bin := build(t, dir, c.name, args...)
			if strings.HasPrefix(c.name, "stripped") {
				if f, err := elfSymbolCount(bin); err != nil || f != 0 {
					t.Fatalf("%s has %d ELF symbols (%v), want none", c.name, f, err)
				}
			}
			pid, addrs := started(t, bin)
			s := NewSymbolizer()
			wantFrame(t, s, pid, addrs[0], "main.handler")
			wantFrame(t, s, pid, addrs[1], "main.callee")
		})
	}
}

// elfSymbolCount is how many symbols path's .symtab holds.
func elfSymbolCount(path string) (int, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return 0, nil
	}
	return len(syms), err
}
