package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/engine"
)

// VM flags that could only fail later, in QEMU or in the guest, are bad
// usage: exit 2 in one line, before anything runs.
func TestTargetFlagsRefused(t *testing.T) {
	calls := stubRunner(t)
	for _, args := range [][]string{
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--accel", "frob"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--memory", "1"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--vcpus", "0"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--vcpus", "-1"},
		{"matrix", "syscall-read", "--kernel", "debian:6.1-cloud", "--kernel", "debian:6.12-cloud", "--memory", "100"},
		{"gate", "syscall-read", "--variant", "a", "--variant", "b", "--vcpus", "0"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--clock", "wall"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--clock", "virtual", "--accel", "kvm"},
		{"run", "syscall-read", "--kernel", "debian:6.1-cloud", "--clock", "virtual", "--vcpus", "2"},
		// The host has the real clock only: virtual time there is a
		// request that cannot be met.
		{"run", "syscall-read", "--clock", "virtual"},
		{"gate", "syscall-read", "--variant", "a", "--variant", "b", "--clock", "virtual"},
	} {
		code, _, stderr := cli(args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 with one line: %q", args, code, stderr)
		}
	}
	if *calls != 0 {
		t.Errorf("%d runs before refusing", *calls)
	}
}

// The target flags keep their command-line order whatever flags stand
// between them: the first is a gate's base. A boolean such as
// --save-baseline never swallows the flag after it.
func TestTargetFlagOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []engine.TargetUse
	}{
		{"kernels", []string{"--kernel", "A", "--kernel", "B"}, []engine.TargetUse{{Kind: "kernel", Value: "A"}, {Kind: "kernel", Value: "B"}}},
		{"save-baseline before", []string{"--save-baseline", "--kernel", "A", "--kernel", "B"}, []engine.TargetUse{{Kind: "kernel", Value: "A"}, {Kind: "kernel", Value: "B"}}},
		{"save-baseline between", []string{"--kernel", "A", "--save-baseline", "--kernel", "B"}, []engine.TargetUse{{Kind: "kernel", Value: "A"}, {Kind: "kernel", Value: "B"}}},
		{"save-baseline after", []string{"--kernel", "A", "--kernel", "B", "--save-baseline"}, []engine.TargetUse{{Kind: "kernel", Value: "A"}, {Kind: "kernel", Value: "B"}}},
		{"mixed kinds", []string{"--variant", "v:vm.swappiness=10", "--strict", "--target", "t", "--vm", "--kernel=K"},
			[]engine.TargetUse{{Kind: "variant", Value: "v:vm.swappiness=10"}, {Kind: "target", Value: "t"}, {Kind: "vm", Value: ""}, {Kind: "kernel", Value: "K"}}},
		{"values that look like flags", []string{"--trials", "3", "--kernel", "--odd", "--duration", "1s", "--variant", "b"},
			[]engine.TargetUse{{Kind: "kernel", Value: "--odd"}, {Kind: "variant", Value: "b"}}},
		{"--vm=false takes it back", []string{"--vm", "--variant", "a", "--vm=false"}, []engine.TargetUse{{Kind: "variant", Value: "a"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var tf targetFlags
			tf.register(fs)
			tf.registerVariant(fs, "")
			fs.Bool("save-baseline", false, "")
			fs.Bool("strict", false, "")
			fs.Int("trials", 0, "")
			fs.Duration("duration", 0, "")
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, tf.Order, cmp.AllowUnexported(engine.TargetUse{})); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

// gate --save-baseline before two targets is the same-job gate's usage
// error (two targets with a stored-baseline flag), not "one target given".
func TestGateSaveBaselineBeforeTargets(t *testing.T) {
	f := &fakeExec{}
	err := runGate(t.Context(), []string{"--save-baseline", "--variant", "A", "--variant", "B", "syscall-read"}, io.Discard, io.Discard, f.env(fakeSysctls(t)))
	if code := exitCode(err); code != exitUsage || !strings.Contains(err.Error(), "two targets gate the head against the base in this job") {
		t.Errorf("exit %d: %v", code, err)
	}
}

// The host's clock is real: --clock real on a run on the host asks for
// what it has, and runs.
func TestHostRunTakesClockReal(t *testing.T) {
	calls := stubRunner(t, fakeRun{scenario: "syscall-read", scales: steady, seed: 1})
	if code, _, stderr := cli("run", "syscall-read", "--clock", "real"); code != 0 || *calls != 1 {
		t.Errorf("run --clock real on the host: exit %d, %d runs:\n%s", code, *calls, stderr)
	}
}
