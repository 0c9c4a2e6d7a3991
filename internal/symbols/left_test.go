package symbols

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A process that leaves other processes' user frames as hex keeps the
// mappings that hold them; another names the frames from those alone,
// after the process has gone, as the first would have named them.
func TestLeftFramesNamedAfterExit(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	pid := uint32(child.Process.Pid)
	addr := libcFunction(t, pid)
	want := NewSymbolizer().User(pid, addr)
	if strings.HasPrefix(want, "0x") {
		t.Fatalf("named %q in the live process, want a name", want)
	}

	worker := NewSymbolizer()
	worker.LeaveOthers()
	frames := worker.Frames([]uint64{addr, 0x10}, true, pid)
	if frames[0] != fmt.Sprintf("0x%x", addr) {
		t.Fatalf("left frame %q, want hex", frames[0])
	}
	maps := worker.Mappings()[pid]
	if len(maps) != 1 {
		t.Fatalf("kept mappings %+v, want the one holding the frame", maps)
	}
	child.Process.Kill()
	child.Wait()

	NewSymbolizer().NameUserStack(frames, maps)
	if frames[0] != want || frames[1] != "0x10" {
		t.Errorf("named %q after the exit, want [%s 0x10]", frames, want)
	}
}

// libcFunction returns the address of a function of the C library in
// process pid, waiting for the process to map it.
func libcFunction(t *testing.T, pid uint32) uint64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range NewSymbolizer().mappings(pid) {
			if !strings.Contains(m.Path, "/libc.so") {
				continue
			}
			if addr := functionIn(t, m); addr != 0 {
				return addr
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d mapped no C library with a function in a mapping", pid)
	return 0
}

// functionIn returns the address of clock_nanosleep where m maps it, or 0.
func functionIn(t *testing.T, m Mapping) uint64 {
	f, err := elf.Open(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != "clock_nanosleep" || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		for _, p := range f.Progs {
			if p.Type != elf.PT_LOAD || s.Value < p.Vaddr || s.Value >= p.Vaddr+p.Filesz {
				continue
			}
			off := s.Value - p.Vaddr + p.Off
			if m.Off <= off && off < m.Off+m.End-m.Start {
				return m.Start + off - m.Off
			}
		}
	}
	return 0
}
