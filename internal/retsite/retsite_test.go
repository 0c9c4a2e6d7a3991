package retsite

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

func TestDecode(t *testing.T) {
	const addr = 0x1000
	for _, tc := range []struct {
		name string
		code []byte
		want Exits
		err  string // in the error; "" for none
	}{
		{name: "ret", code: []byte{0xc3}, want: Exits{Rets: []uint64{0}}},
		{name: "two rets", // test %edi,%edi; je +6; mov $1,%eax; ret; xor %eax,%eax; ret
			code: []byte{0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0, 0, 0, 0xc3, 0x31, 0xc0, 0xc3},
			want: Exits{Rets: []uint64{9, 12}}},
		{name: "C3 inside an immediate", // mov $0xc3c3c3c3,%eax; ret
			code: []byte{0xb8, 0xc3, 0xc3, 0xc3, 0xc3, 0xc3},
			want: Exits{Rets: []uint64{5}}},
		{name: "ret imm16", code: []byte{0xc2, 0x08, 0x00, 0xc3}, want: Exits{Rets: []uint64{0, 3}}},
		{name: "rep ret", code: []byte{0xf3, 0xc3}, want: Exits{Rets: []uint64{0}}},
		{name: "tail calls", // jne -0x100 (out); call +0 (in); jmp +0x100 (out)
			code: []byte{0x0f, 0x85, 0x00, 0xff, 0xff, 0xff, 0xe8, 0, 0, 0, 0, 0xe9, 0x00, 0x01, 0, 0},
			want: Exits{TailCalls: []TailCall{{Offset: 0, Target: addr + 6 - 0x100}, {Offset: 11, Target: addr + 16 + 0x100}}}},
		{name: "call out is no exit", code: []byte{0xe8, 0x00, 0x10, 0, 0, 0xc3}, want: Exits{Rets: []uint64{5}}},
		{name: "indirect jump stays", code: []byte{0xff, 0xe0, 0xc3}, want: Exits{Rets: []uint64{2}}}, // jmp *%rax; ret
		{name: "padding after", code: []byte{0xc3, 0xcc, 0xcc, 0x90, 0x0f, 0x1f, 0x00}, want: Exits{Rets: []uint64{0}}},
		{name: "vzeroupper then ret", code: []byte{0xc5, 0xf8, 0x77, 0xc3}, want: Exits{Rets: []uint64{3}}},
		{name: "vzeroupper before more code", // vzeroupper; mov $-1,(%r8); ret
			code: []byte{0xc5, 0xf8, 0x77, 0x49, 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff, 0xc3},
			want: Exits{Rets: []uint64{10}}},
		{name: "undecodable", code: []byte{0x90, 0x0f, 0x0b, 0x06, 0xc3}, err: "cannot decode the instruction at +0x3 (06 c3)"},
		{name: "truncated", code: []byte{0xc3, 0xe8, 0x00}, err: "cannot decode the instruction at +0x1 (e8 00): truncated or unknown instruction"},
		{name: "branch into an instruction", // jmp +1 lands inside the mov
			code: []byte{0xeb, 0x01, 0xb8, 0xc3, 0, 0, 0, 0xc3},
			err:  "+0x3 (c3 00 00 00 c3): a branch targets the middle of a decoded instruction (the branch at +0x0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.code, addr)
			if tc.err != "" {
				var de *DecodeError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &de) {
					t.Fatalf("error %v, want a *DecodeError saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("exits (-want +got):\n%s", diff)
			}
		})
	}
}

// build builds one of the test programs into a temporary directory: cmd
// is the command, its last word the source.
func build(t *testing.T, name string, cmd ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	c := exec.Command(cmd[0], append(append(cmd[1:len(cmd)-1:len(cmd)-1], "-o", bin), cmd[len(cmd)-1])...)
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
	return bin
}

// sites opens bin and finds the sites of each of names.
func sites(t *testing.T, bin string, names ...string) (map[string]Sites, map[string]Function) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fns, err := Functions(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Sites{}
	for _, n := range names {
		fn, ok := fns[n]
		if !ok {
			t.Fatalf("%s: no function %s", bin, n)
		}
		s, err := Find(f, fn)
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		out[n] = s
	}
	return out, fns
}

// checkRetBytes checks that each RET's file offset holds C3 or C2, or a
// prefix before one.
func checkRetBytes(t *testing.T, bin string, ss map[string]Sites) {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range ss {
		for _, off := range s.Rets {
			if off < s.Offset || off >= s.Offset+s.Size {
				t.Errorf("%s: RET at %#x, outside the function's %#x+%#x", name, off, s.Offset, s.Size)
				continue
			}
			c := b[off]
			if c == 0xf3 || c == 0xf2 {
				c = b[off+1]
			}
			if c != 0xc3 && c != 0xc2 {
				t.Errorf("%s: RET at file offset %#x holds % x", name, off, b[off:off+2])
			}
		}
	}
}

// TestCFunctions finds the exits of testdata/exits.c's functions in a
// build of it: the assembly ones as written, the compiled one's RETs
// wherever the compiler put them.
func TestCFunctions(t *testing.T) {
	testenv.Need(t, testenv.Platform("linux/amd64"))
	testenv.Need(t, testenv.Tool("cc", "Debian: gcc"))
	bin := build(t, "exits", "cc", "-O2", "-fcf-protection=none", "testdata/exits.c")
	ss, fns := sites(t, bin, "tg_two_rets", "tg_c3_imm", "tg_ret_imm", "tg_tail", "tg_vzeroupper", "tg_branchy")
	rel := func(name string) []uint64 {
		var r []uint64
		for _, off := range ss[name].Rets {
			r = append(r, off-ss[name].Offset)
		}
		return r
	}
	for name, want := range map[string][]uint64{
		"tg_two_rets":   {9, 12}, // as in TestDecode
		"tg_c3_imm":     {5},
		"tg_ret_imm":    {4, 7}, // test; je; ret $8; ret
		"tg_tail":       nil,
		"tg_vzeroupper": {3},
	} {
		if diff := cmp.Diff(want, rel(name)); diff != "" {
			t.Errorf("%s: RETs (-want +got):\n%s", name, diff)
		}
	}
	if tc := ss["tg_tail"].TailCalls; len(tc) != 2 || tc[0].Target != fns["tg_two_rets"].Addr || tc[1].Target != fns["tg_c3_imm"].Addr {
		t.Errorf("tg_tail: tail calls %+v, want to tg_two_rets (%#x) and tg_c3_imm (%#x)", tc, fns["tg_two_rets"].Addr, fns["tg_c3_imm"].Addr)
	}
	if len(ss["tg_branchy"].Rets) == 0 {
		t.Errorf("tg_branchy: no RET found")
	}
	checkRetBytes(t, bin, ss)
}

// TestGoFunctions finds the exits of testdata/goexits's functions, in a
// build with a symbol table and one without (bounds from the pclntab):
// the same RETs in both, two for twoReturns, and the promoted method's
// wrapper leaves by a tail call to the method. Every function of the
// package main decodes.
func TestGoFunctions(t *testing.T) {
	testenv.Need(t, testenv.Platform("linux/amd64"))
	testenv.Need(t, testenv.Tool("go", "https://go.dev/dl"))
	full := build(t, "goexits", "go", "build", "./testdata/goexits")
	stripped := build(t, "goexits-stripped", "go", "build", "-ldflags=-s -w", "./testdata/goexits")
	names := []string{"main.twoReturns", "main.spill", "main.(*embeds).Read", "main.(*reader).Read"}
	withSyms, fns := sites(t, full, names...)
	fromPcln, pfns := sites(t, stripped, names...)
	for _, n := range names {
		if withSyms[n].Pclntab || !fromPcln[n].Pclntab {
			t.Errorf("%s: bounds from the pclntab %v with a symbol table, %v without", n, withSyms[n].Pclntab, fromPcln[n].Pclntab)
		}
		if fromPcln[n].Size < withSyms[n].Size || fromPcln[n].Size > withSyms[n].Size+64 {
			t.Errorf("%s: %d bytes by the pclntab, %d by the symbol table: want the same and up to 64 bytes of padding", n, fromPcln[n].Size, withSyms[n].Size)
		}
		// The two builds differ in the symbol table only, which comes
		// after the code: the same code at the same offsets.
		if diff := cmp.Diff(withSyms[n].Rets, fromPcln[n].Rets); diff != "" {
			t.Errorf("%s: RETs with a symbol table (-) and from the pclntab (+):\n%s", n, diff)
		}
	}
	if got := len(withSyms["main.twoReturns"].Rets); got != 2 {
		t.Errorf("main.twoReturns: %d RETs, want 2", got)
	}
	if tc := withSyms["main.(*embeds).Read"].TailCalls; len(tc) != 1 || tc[0].Target != fns["main.(*reader).Read"].Addr {
		t.Errorf("main.(*embeds).Read: tail calls %+v, want one to main.(*reader).Read at %#x", tc, fns["main.(*reader).Read"].Addr)
	}
	if len(withSyms["main.(*reader).Read"].TailCalls) != 0 {
		t.Errorf("main.(*reader).Read: tail calls %+v", withSyms["main.(*reader).Read"].TailCalls)
	}
	checkRetBytes(t, full, withSyms)
	checkRetBytes(t, stripped, fromPcln)

	// Every compiled function of the program decodes in step, in both
	// builds.
	for bin, fs := range map[string]map[string]Function{full: fns, stripped: pfns} {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for name, fn := range fs {
			if !strings.HasPrefix(name, "main.") && !strings.HasPrefix(name, "fmt.") {
				continue
			}
			if _, err := Find(f, fn); err != nil {
				t.Errorf("%s: %v", bin, err)
			}
			n++
		}
		f.Close()
		if n < 30 {
			t.Errorf("%s: %d functions of main and fmt, want the whole packages", bin, n)
		}
	}
}

func TestNotX86(t *testing.T) {
	_, err := Find(&elf.File{FileHeader: elf.FileHeader{Machine: elf.EM_AARCH64}}, Function{Name: "f"})
	if err == nil || !strings.Contains(err.Error(), "x86-64 code only") {
		t.Errorf("error %v", err)
	}
}
