package testenv

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how the test ended.
type recorder struct {
	testing.TB
	ended string // "skip: ..." or "fatal: ..."; "" when it went on
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.ended = "skip: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = "fatal: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// outcome runs Need(f) on a recorder in a goroutine of its own, as
// testing runs a test, and says how it ended.
func outcome(t *testing.T, f Feature) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Need(r, f)
	}()
	<-done
	return r.ended
}

func TestNeed(t *testing.T) {
	absent := errors.New("no such thing")
	yes, no := func() bool { return true }, func() bool { return false }
	for _, tc := range []struct {
		name   string
		f      Feature
		strict bool
		want   string // prefix of how it ends
	}{
		{"usable", Feature{Name: "x", Use: func() error { return nil }, Required: true}, true, ""},
		{"missing", Feature{Name: "x", Use: func() error { return absent }}, false, "skip: needs x: no such thing"},
		{"missing, strict, trusted", Feature{Name: "x", Use: func() error { return absent }}, true, "skip: needs x: no such thing"},
		{"missing, strict, absent", Feature{Name: "x", Use: func() error { return absent }, Present: no}, true, "skip: needs x"},
		{"missing, present", Feature{Name: "x", Use: func() error { return absent }, Present: yes}, false, "skip: needs x"},
		{"missing, strict, present", Feature{Name: "x", Use: func() error { return absent }, Present: yes}, true, "fatal: needs x: no such thing, though this machine has it"},
		{"missing, required", Feature{Name: "x", Use: func() error { return absent }, Required: true}, false, "skip: needs x"},
		{"missing, strict, required", Feature{Name: "x", Use: func() error { return absent }, Required: true}, true, "fatal: needs x: no such thing (TAILGATE_CI_STRICT is set, and CI provides it)"},
		{"tool", Tool("no-such-tool-here", "apt-get install it"), false, "skip: needs no-such-tool-here: exec: \"no-such-tool-here\": executable file not found in $PATH (apt-get install it)"},
		{"optional tool, strict", Optional(Tool("no-such-tool-here", "")), true, "skip: needs no-such-tool-here"},
		{"platform", Platform("plan9/mips"), false, "skip: needs plan9/mips: this is " + runtime.GOOS + "/" + runtime.GOARCH},
		{"CPUs", CPUs(1 << 20), true, "skip: needs 1048576 CPUs: this process may run on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.strict {
				t.Setenv(StrictEnv, "1")
			} else {
				t.Setenv(StrictEnv, "")
			}
			got := outcome(t, tc.f)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("Need ended %q, want %q", got, tc.want)
			}
		})
	}
}

// The features asked of this machine agree with what it is.
func TestFeaturesOfThisMachine(t *testing.T) {
	t.Setenv(StrictEnv, "")
	if got := outcome(t, Root); (got == "") != (os.Geteuid() == 0) {
		t.Errorf("Root as uid %d: %q", os.Geteuid(), got)
	}
	if got := outcome(t, Sysctl("kernel.ostype")); got != "" {
		t.Errorf("kernel.ostype: %q", got)
	}
	if got := outcome(t, Sysctl("kernel.no_such_parameter")); !strings.HasPrefix(got, "skip: needs kernel.no_such_parameter") {
		t.Errorf("kernel.no_such_parameter: %q", got)
	}
	cfg := kernelConfig()
	if len(cfg) == 0 {
		Missing(t, Feature{Name: "the kernel's build config"}, errors.New("neither /proc/config.gz nor /boot/config-RELEASE reads"))
	}
	// Every kernel that runs BPF programs, as this module's tests do,
	// is built with CONFIG_BPF.
	if !KernelConfig("CONFIG_NO_SUCH_OPTION", "CONFIG_BPF")() || KernelConfig("CONFIG_NO_SUCH_OPTION")() {
		t.Errorf("KernelConfig misreads the build config (%d options)", len(cfg))
	}
}
