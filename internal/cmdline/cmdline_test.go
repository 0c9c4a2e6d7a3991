package cmdline

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPrintFlags checks the flags are spelled --name (-o for one letter)
// and otherwise read as flag.PrintDefaults writes them.
func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("trials", 0, "`N` trials")
	fs.String("accel", "auto", "QEMU accelerator")
	fs.Bool("vm", false, "run in a VM")
	fs.Duration("budget", 5*time.Minute, "wall time")
	fs.String("o", "", "write to `FILE`")
	fs.Func("variant", "a host `NAME`", func(string) error { return nil })
	var got strings.Builder
	PrintFlags(&got, fs)
	want := `  --accel string
    	QEMU accelerator (default "auto")
  --budget duration
    	wall time (default 5m0s)
  -o FILE
    	write to FILE
  --trials N
    	N trials
  --variant NAME
    	a host NAME
  --vm
    	run in a VM
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("PrintFlags (-want +got):\n%s", diff)
	}
}

func TestWrapHelp(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"short lines stay", "usage: tailgate x\n\nshort\n", "usage: tailgate x\n\nshort\n"},
		{"prose keeps its indent", "  aaaaaaaa bbbbbbbb cccccccc dddddddd\n", "  aaaaaaaa bbbbbbbb cccccccc\n  dddddddd\n"},
		{"synopsis goes on under its arguments", "usage: tailgate run AAA [--b C] [--dd E]\n",
			"usage: tailgate run AAA [--b C]\n                    [--dd E]\n"},
		{"a subcommand's under its arguments", "       tailgate history add STORE [--x Y]\n",
			"       tailgate history add STORE\n                            [--x Y]\n"},
		{"a long word stays whole", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b\n", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Wrap(tc.in, 34); got != tc.want {
				t.Errorf("Wrap:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestParseDidYouMean(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--trails", "flag provided but not defined: -trails; did you mean --trials? (see tailgate run -h)"},
		{"-p", "flag provided but not defined: -p (see tailgate run -h)"},
		{"--traisl", "flag provided but not defined: -traisl; did you mean --trials? (see tailgate run -h)"},
		{"--zzzzzz", "flag provided but not defined: -zzzzzz (see tailgate run -h)"},
	} {
		fs := NewFlagSet("run")
		fs.Int("trials", 3, "")
		fs.Duration("duration", 0, "")
		fs.String("o", "", "")
		_, err := Parse(fs, []string{"syscall-read", tc.arg, "5"})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%s) = %v, want %q", tc.arg, err, tc.want)
		}
	}
}
