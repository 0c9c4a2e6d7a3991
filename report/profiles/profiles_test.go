package profiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// side is a Result of one scenario whose metric's two trials sampled
// these stacks.
func side(samples ...result.StackSample) *result.Result {
	half := len(samples) / 2
	trial := func(ss []result.StackSample) result.Trial {
		return result.Trial{Profile: &result.Profile{Quantile: 0.99, ThresholdNs: 40000, PeriodNs: 250000, Requests: 3, Samples: ss}}
	}
	return &result.Result{Scenarios: []result.Scenario{{
		Name: "tcp-server",
		Metrics: map[string]*result.Metric{
			"request.server": {Unit: "ns", Trials: []result.Trial{trial(samples[:half]), trial(samples[half:])}},
		},
	}}}
}

var (
	inWrite = result.StackSample{Kernel: []string{"tcp_sendmsg+0x1c", "__x64_sys_write+0x19"}, User: []string{"__write+0x4f", "serve+0x88"}, PID: 7, Count: 6}
	inRead  = result.StackSample{Kernel: []string{"tcp_recvmsg+0x10"}, User: []string{"__read+0x4f", "serve+0x3c"}, PID: 7, Count: 4}
	inSpin  = result.StackSample{User: []string{"__vdso_clock_gettime+0x36", "clock_gettime+0x19", "handle+0x5d"}, PID: 7, Count: 30}
	inSpin2 = result.StackSample{User: []string{"__vdso_clock_gettime+0x52", "clock_gettime+0x19", "handle+0x5d"}, PID: 7, Count: 10}
)

// The files parse as pprof profiles and carry the functions sampled,
// offsets dropped, kernel frames marked, and the counts.
func TestWrittenFilesParse(t *testing.T) {
	dir := t.TempDir()
	w, err := WriteSides(dir, side(inWrite, inRead), side(inWrite, inSpin, inRead, inSpin2))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 2 || w[0].Side != "base" || w[1].Side != "head" {
		t.Fatalf("wrote %+v, want base and head", w)
	}
	for i, want := range []struct {
		funcs   []string
		samples int64
	}{
		{[]string{"__read", "__write", "__x64_sys_write", "serve", "tcp_recvmsg", "tcp_sendmsg"}, 10},
		{[]string{"__read", "__vdso_clock_gettime", "__write", "__x64_sys_write", "clock_gettime", "handle", "serve", "tcp_recvmsg", "tcp_sendmsg"}, 50},
	} {
		f, err := os.Open(w[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", w[i].Path, err)
		}
		var funcs []string
		for _, fn := range p.Function {
			funcs = append(funcs, fn.Name)
			kernelFn := fn.Name == "__x64_sys_write" || strings.HasPrefix(fn.Name, "tcp_")
			if kernel := fn.Filename == kernelFile; kernel != kernelFn {
				t.Errorf("%s: function %s marked kernel=%v", w[i].Side, fn.Name, kernel)
			}
		}
		slices.Sort(funcs)
		if !slices.Equal(funcs, want.funcs) {
			t.Errorf("%s: functions %q, want %q", w[i].Side, funcs, want.funcs)
		}
		var n int64
		for _, s := range p.Sample {
			n += s.Value[0]
			if s.Value[1] != s.Value[0]*250000 {
				t.Errorf("%s: sample of %d counts %d ns, want count × period", w[i].Side, s.Value[0], s.Value[1])
			}
		}
		if n != want.samples {
			t.Errorf("%s: %d samples, want %d", w[i].Side, n, want.samples)
		}
	}
	// A side without samples gets no file.
	w, err = WriteSides(t.TempDir(), &result.Result{}, side(inWrite, inSpin))
	if err != nil || len(w) != 1 || w[0].Side != "head" {
		t.Errorf("head alone sampled: wrote %+v (%v), want head's file alone", w, err)
	}
}

// go tool pprof opens the files, and its -diff_base shows the function
// that grew on top.
func TestPprofShowsTheGrowth(t *testing.T) {
	testenv.Need(t, testenv.Tool("go", "install Go"))
	dir := t.TempDir()
	w, err := WriteSides(dir, side(inWrite, inRead), side(inWrite, inSpin, inRead, inSpin2))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-normalize", "-diff_base", w[0].Path, w[1].Path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	// The first row under the header is the largest flat difference.
	lines := strings.Split(string(out), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "flat%") })
	if i < 0 || i+1 >= len(lines) || !strings.HasSuffix(strings.TrimSpace(lines[i+1]), "__vdso_clock_gettime") {
		t.Errorf("pprof -diff_base's top row is not __vdso_clock_gettime:\n%s", out)
	}
	if _, err := filepath.Rel(dir, w[0].Path); err != nil || filepath.Base(filepath.Dir(w[0].Path)) != "tcp-server.request.server" {
		t.Errorf("base written to %s, want DIR/tcp-server.request.server/", w[0].Path)
	}
}
