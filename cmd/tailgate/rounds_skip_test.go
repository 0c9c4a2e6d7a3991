package main

import (
	"testing"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

// A gate or matrix of every built-in (no scenario named) passes over what
// a target cannot measure, as run does (a disk wait in virtual time, a
// tracer the kernel lacks); one named is refused instead. Before, a gate
// of two kernels in virtual time with no scenario named refused
// fsync-scratch and ran nothing.
func TestRoundsOfEveryBuiltinPassOver(t *testing.T) {
	for _, c := range []struct {
		names []string
		skip  bool
	}{
		{nil, true},
		{[]string{"syscall-read"}, false},
	} {
		fs := cmdline.NewFlagSet("matrix")
		var fl commandFlags
		fl.run.register(fs)
		fl.targets.register(fs)
		fl.report.register(fs)
		fl.targets.registerVariant(fs, "a host variant")
		if err := fs.Parse([]string{"--variant", "a", "--variant", "b"}); err != nil {
			t.Fatal(err)
		}
		r, err := fl.forRounds(c.names, roundsEnv{}, &engine.RoundsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.spec.SkipUnsupported != c.skip || len(r.spec.Scenarios) == 0 {
			t.Errorf("scenarios named %v: SkipUnsupported %v over %d scenarios, want %v", c.names, r.spec.SkipUnsupported, len(r.spec.Scenarios), c.skip)
		}
	}
}
