package ufunc

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

var (
	goBuildOnce sync.Once
	goBuildDir  string
	goBuildErr  error
)

// goBinaries builds testdata/gowork four times, once: gowork,
// gowork-stripped without its symbol table and DWARF (-s -w), whose
// functions are in its pclntab only, gowork-pie (position-independent,
// as distributions build Go programs) and gowork-arm64.
func goBinaries(t testing.TB) (full, stripped string) {
	t.Helper()
	testenv.Need(t, testenv.Platform("linux/amd64"))
	testenv.Need(t, testenv.Tool("go", "https://go.dev/dl"))
	goBuildOnce.Do(func() {
		if goBuildDir, goBuildErr = os.MkdirTemp("", "ufunc-go-test-"); goBuildErr != nil {
			return
		}
		for name, build := range map[string]struct{ flags, arch, mode string }{
			"gowork":          {"", "amd64", "exe"},
			"gowork-stripped": {"-s -w", "amd64", "exe"},
			"gowork-pie":      {"", "amd64", "pie"},
			"gowork-arm64":    {"", "arm64", "exe"},
		} {
			cmd := exec.Command("go", "build", "-buildmode="+build.mode, "-ldflags="+build.flags, "-o", filepath.Join(goBuildDir, name), "./testdata/gowork")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+build.arch)
			if out, err := cmd.CombinedOutput(); err != nil {
				goBuildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if goBuildErr != nil {
		t.Fatal(goBuildErr)
	}
	return filepath.Join(goBuildDir, "gowork"), filepath.Join(goBuildDir, "gowork-stripped")
}

// goTiming is a function's calls as gowork timed them.
type goTiming struct {
	calls    uint64
	median   time.Duration
	migrated int
	// lo and hi are the calls' p45 and p55 (the median where not printed).
	lo, hi time.Duration
}

// goWork is a started gowork waiting for its go line.
type goWork struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   strings.Builder
}

func startGoWork(t testing.TB, bin string, env []string, args ...string) *goWork {
	t.Helper()
	w := &goWork{cmd: exec.Command(bin, args...)}
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stdout = &w.out
	w.cmd.Stderr = os.Stderr
	var err error
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	return w
}

// run lets it go and returns what it printed, by function. It fails the
// test when the program does not exit 0: a crash.
func (w *goWork) run(t testing.TB) map[string]goTiming {
	t.Helper()
	if _, err := io.WriteString(w.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("%s %s: %v (a crash?); it printed %q", w.cmd.Path, strings.Join(w.cmd.Args[1:], " "), err, w.out.String())
	}
	got := map[string]goTiming{}
	for _, line := range strings.Split(strings.TrimSpace(w.out.String()), "\n") {
		var name string
		var g goTiming
		var ns, lo, hi int64
		// Four fields, or six with the calls' p45 and p55.
		if n, err := fmt.Sscan(line, &name, &g.calls, &ns, &g.migrated, &lo, &hi); n != 4 && n != 6 {
			t.Fatalf("%s printed %q: %v", w.cmd.Path, line, err)
		}
		g.median = time.Duration(ns)
		g.lo, g.hi = g.median, g.median
		if lo != 0 {
			g.lo, g.hi = time.Duration(lo), time.Duration(hi)
		}
		got[name] = g
	}
	return got
}

// TestGoFunctions times three functions of a Go program, with and
// without its symbol table, and built position-independent: work, which sleeps 2 ms in a fresh goroutine
// whose stack its entry grows, from 8 goroutines with GOMAXPROCS=4 (most
// of its calls return on another thread than they began on); nest, four
// calls deep, each level timed; spin, on the CPU, preempted. Every call
// is counted, each p50 is within 10% of the program's own timing of its
// calls (of its p45 to p55: nest's median is the edge of a cluster of
// levels, where a call a probe sees longer than the program's clock
// does moves it by a whole gap), and the program exits 0.
func TestGoFunctions(t *testing.T) {
	full, stripped := goBinaries(t)
	for _, bin := range []string{full, stripped, filepath.Join(filepath.Dir(full), "gowork-pie")} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			const n, goroutines = 400, 8
			w := startGoWork(t, bin, []string{"GOMAXPROCS=4"}, "sleep", fmt.Sprint(n), fmt.Sprint(goroutines), "2ms")
			syms := []string{"main.work", "main.nest", "main.spin"}
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(w.cmd.Process.Pid)}, Binary: bin, Symbols: syms})
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			defer tr.Close()
			own := w.run(t)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			if own["work"].calls != n || own["work"].migrated == 0 {
				t.Errorf("the program made %d calls of work, %d of them returning on another thread; want %d, some", own["work"].calls, own["work"].migrated, n)
			}
			for _, sym := range syms {
				name := strings.TrimPrefix(sym, "main.")
				h := hs[Metric(bin, sym)]
				if got := h.Count(); got != own[name].calls {
					t.Errorf("%s: counted %d calls, the program made %d", sym, got, own[name].calls)
				}
				p50, o := h.Quantile(0.5), own[name]
				t.Logf("%s: p50 %.0f ns traced, %v by the program's own clock (p45 %v, p55 %v); %d of %d calls returned on another thread", sym, p50, o.median, o.lo, o.hi, o.migrated, o.calls)
				if p50 < 0.9*float64(o.lo) || p50 > 1.1*float64(o.hi) {
					t.Errorf("%s: p50 %.0f ns, not within 10%% of the program's own p45 to p55, %v to %v (p50 %v)", sym, p50, o.lo, o.hi, o.median)
				}
			}
			if m, err := tr.Missed(); err != nil || m != 0 {
				t.Errorf("missed %d events (%v)", m, err)
			}
		})
	}
}

// TestGoStackGrowth: each call of work grows its goroutine's stack at
// its entry, so the runtime copies the stack and runs work again from its
// entry: the entry probe runs twice a call, and every call is still
// counted once, its start found at the RET after the copy.
func TestGoStackGrowth(t *testing.T) {
	full, _ := goBinaries(t)
	st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 200
	w := startGoWork(t, full, []string{"GOMAXPROCS=4"}, "sleep", fmt.Sprint(n), "4", "1ms")
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(w.cmd.Process.Pid)}, Binary: full, Symbols: []string{"main.work"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	w.run(t)
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]uint64{}
	for _, id := range tr.ProgramIDs() {
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			t.Fatal(err)
		}
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		if s, err := p.Stats(); err == nil {
			runs[info.Name] = s.RunCount
		}
		p.Close()
	}
	t.Logf("program runs %v, %d calls counted", runs, hs[Metric(full, "main.work")].Count())
	if got := hs[Metric(full, "main.work")].Count(); got != n {
		t.Errorf("counted %d calls of main.work, the program made %d", got, n)
	}
	if runs["ufunc_go_entry"] < 2*n {
		t.Errorf("the entry probe ran %d times for %d calls: the calls did not grow their stacks", runs["ufunc_go_entry"], n)
	}
}

// TestGoEvidence keeps the slowest calls of a Go function with the user
// stack at its RET: the function itself, then its caller (the closure
// in main that calls work), which the frame pointers alone skip there.
func TestGoEvidence(t *testing.T) {
	full, _ := goBinaries(t)
	w := startGoWork(t, full, []string{"GOMAXPROCS=4"}, "sleep", "40", "4", "1ms")
	const k = 3
	tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(w.cmd.Process.Pid), Evidence: k}, Binary: full, Symbols: []string{"main.work"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Reset(); err != nil {
		t.Fatal(err)
	}
	w.run(t)
	evs, dropped, err := tr.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	name := func(addr uint64) string {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && addr >= s.Value && addr < s.Value+s.Size {
				return s.Name
			}
		}
		return fmt.Sprintf("%#x", addr)
	}
	got := evs[Metric(full, "main.work")]
	if len(got) != k {
		t.Fatalf("%d events, want %d (dropped %d)", len(got), k, dropped)
	}
	for _, e := range got {
		var frames []string
		for _, a := range e.UserStack {
			frames = append(frames, name(a))
		}
		if len(frames) < 3 || frames[0] != "main.work" || !strings.HasPrefix(frames[1], "main.main.func") {
			t.Errorf("event of %d ns: user stack %v, want main.work, then the closure of main that calls it", e.Latency, frames)
		}
	}
}

// TestGoProbes checks where a Go function's probes go: the entry probe
// of a function with a stack check past it, on the JBE the kernel
// emulates; of others (a leaf, a frame too large for the short check) on
// its first instruction; and a probe on each RET.
func TestGoProbes(t *testing.T) {
	full, _ := goBinaries(t)
	tg, err := Check(full, []string{"main.nest", "main.nop", "main.work"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.Go) != 3 {
		t.Fatalf("Go sites %+v, want three functions' (a Go binary)", tg.Go)
	}
	if p := tg.Probes[0]; p.Offset != 4 || p.Mnemonic != "jcc" || p.SingleStepped {
		t.Errorf("main.nest: entry probe %+v, want on the jbe at +4", p)
	}
	for _, p := range tg.Probes[1:] {
		if p.Offset != 0 || !p.SingleStepped {
			t.Errorf("%s: entry probe %+v, want its first instruction, single-stepped", p.Symbol, p)
		}
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range tg.Go {
		if len(s.Rets) == 0 {
			t.Errorf("%s: no RETs", tg.Probes[i].Symbol)
		}
		for _, off := range s.Rets {
			if b[off] != 0xc3 {
				t.Errorf("%s: RET at file offset %#x holds %#x", tg.Probes[i].Symbol, off, b[off])
			}
		}
	}
}

// TestGoBadInput: a function the binary lacks, an arm64 binary, a
// function that leaves by a tail call (a promoted method's wrapper), one
// whose code does not decode, one without a RET and an assembly one are
// each one line, exit 2.
func TestGoBadInput(t *testing.T) {
	full, stripped := goBinaries(t)
	for _, tc := range []struct {
		name, binary, symbol string
		is                   error
		want                 string
	}{
		{name: "unknown", binary: full, symbol: "main.wrok", is: ErrUnknownSymbol, want: `has no function "main.wrok"; near: main.work`},
		{name: "unknown stripped", binary: stripped, symbol: "main.wrok", is: ErrUnknownSymbol, want: `has no function "main.wrok"; near: main.work`},
		{name: "tail call", binary: full, symbol: "main.(*wrapped).Add", is: ErrReturns,
			want: "main.(*wrapped).Add leaves by a tail call to main.(*counter).Add at +0x"},
		{name: "arm64", binary: filepath.Join(filepath.Dir(full), "gowork-arm64"), symbol: "main.work", is: ErrGoBinary,
			want: "gowork-arm64 is a Go binary (go1."},
		{name: "undecodable", binary: full, symbol: "main.undecodable.abi0", is: ErrReturns,
			want: "main.undecodable.abi0: cannot decode the instruction at +0x0 (06 c3"},
		{name: "no ret", binary: full, symbol: "main.forever.abi0", is: ErrReturns,
			want: "main.forever.abi0 has no RET instruction (it never returns)"},
		{name: "assembly", binary: full, symbol: "main.asmret.abi0", is: ErrReturns,
			want: "main.asmret.abi0 is an assembly function (ABI0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: 1}, Binary: tc.binary, Symbols: []string{tc.symbol}})
			if err == nil {
				tr.Close()
				t.Fatal("accepted")
			}
			if !errors.Is(err, tc.is) || !errors.Is(err, tracing.ErrBadTarget) {
				t.Errorf("error %q is not %v and tracing.ErrBadTarget", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line saying %q", err, tc.want)
			}
		})
	}
}

func TestGoAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"go1.17", true}, {"go1.16.15", false}, {"go1.22.1", true}, {"go1.9", false},
		{"devel go1.27-abcdef Mon Dec 7", true}, {"devel go1.10-x", false}, {"unknown", true},
	} {
		if got := goAtLeast(tc.v, 17); got != tc.want {
			t.Errorf("goAtLeast(%q, 17) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// BenchmarkGoProbeCost measures what the probes add to a call of a Go
// function: gowork's nop (a leaf, whose first instruction and RET are
// both single-stepped) and framed (its entry probe on the emulated JBE
// past the stack check, its RET single-stepped), each called in a loop
// untraced and then traced. Reported: ns a call, untraced and the added
// cost traced (framed's includes the nop it calls), in wall time and in
// the process's CPU time (-cpu: without the time it waited for a CPU on
// a loaded machine), and the mean run time of the BPF programs, the rest
// of the cost being the kernel's traps.
func BenchmarkGoProbeCost(b *testing.B) {
	full, _ := goBinaries(b)
	st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const n = 50_000
	var bpf tracing.RunStats
	run := func(traced bool) map[string]goTiming {
		w := startGoWork(b, full, nil, "nop", fmt.Sprint(n))
		if traced {
			tr, err := New(Options{TracerOptions: tracing.TracerOptions{TGID: uint32(w.cmd.Process.Pid)}, Binary: full, Symbols: []string{"main.nop", "main.framed"}})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			defer func() {
				if bpf, err = tr.RunStats(); err != nil {
					b.Fatal(err)
				}
				hs, err := tr.Read()
				if err != nil {
					b.Fatal(err)
				}
				// framed calls nop: nop is called 2n times.
				for s, want := range map[string]uint64{"main.nop": 2 * n, "main.framed": n} {
					if c := hs[Metric(full, s)].Count(); c != want {
						b.Errorf("%s: counted %d calls of %d", s, c, want)
					}
				}
			}()
		}
		return w.run(b)
	}
	for b.Loop() {
		plain, traced := run(false), run(true)
		for _, f := range []string{"nop", "framed", "nop-cpu", "framed-cpu"} {
			b.ReportMetric(float64(plain[f].median), f+"-ns/call")
			b.ReportMetric(float64(traced[f].median-plain[f].median), f+"-probes-ns/call")
		}
		b.ReportMetric(bpf.PerRun(), "bpf-ns/run")
	}
}
