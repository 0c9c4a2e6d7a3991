package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/tailgate-ci/tailgate/engine/bisect"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

var bisectUsage = `usage: tailgate bisect --good A --bad B --build CMD [--repo DIR] [-o DIR] SCENARIO [-- GATE FLAGS]
       tailgate bisect --good A --bad B --build CMD --kernel IMAGE [--cmdline-file FILE] SCENARIO [-- GATE FLAGS]

Finds the first commit after A, up to B, at which the scenario file's gated
percentile regressed. git bisect picks the commits; each is built with CMD
and gated in the same job against A's build, as tailgate gate SCENARIO
--variant good:dir=A --variant C:dir=C would (dir=: the scenario's directory
in each build's checkout). A regression marks the commit bad, no change
good; an inconclusive gate or a failed build skips it. B is gated first: a B
that does not regress leaves nothing to bisect. The builds are made in
temporary git worktrees, one for A and one for git bisect to move, removed
on every exit; the checkout is not touched. CMD runs in the worktree (sh -c,
TAILGATE_COMMIT set). Flags after -- go to each gate (--budget, --duration,
--clock).

With --kernel, the history is a kernel's: CMD leaves the kernel image at
IMAGE in the worktree (arch/x86/boot/bzImage), and each step boots A's and
C's in one gate in VMs, tailgate gate SCENARIO --kernel good=A/IMAGE
--kernel C=C/IMAGE; SCENARIO may be a built-in. IMAGE a debian: spec boots
that kernel on both sides, for a history of boot parameters that
--cmdline-file FILE (in each worktree) holds.

Stderr has a line per step: its commit, its verdict and gated ratio, git
bisect's term. Stdout has the first bad commit and its gate's summary at the
end.

` + helpEnd(exits{"0 B does not regress against A",
	"1 the regression is bisected (the first bad commit, or the commits skips leave it among)",
	exitBadInput, exitInfraAny + " (A or B does not build)"},
	"tailgate bisect --good v1.4 --bad main --build 'make bin/server' \\",
	"    latency.yaml -- --budget 5m",
	"tailgate bisect --good v6.12 --bad HEAD --build 'make olddefconfig bzImage' \\",
	"    --kernel arch/x86/boot/bzImage syscall-read -- --clock virtual",
	"tailgate bisect --good A --bad main --build true --kernel debian:6.12-cloud \\",
	"    --cmdline-file boot/cmdline syscall-write")

func cmdBisect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("bisect")
	cmdline.SetUsage(fs, stdout, bisectUsage)
	o := bisect.Options{Log: stderr}
	fs.StringVar(&o.Good, "good", "", "the good `COMMIT`: every step is gated against its build")
	fs.StringVar(&o.Bad, "bad", "", "the bad `COMMIT`, a descendant of --good")
	fs.StringVar(&o.Build, "build", "", "shell `CMD` that builds a commit in its checkout, e.g. 'make bin/server'")
	fs.StringVar(&o.Repo, "repo", ".", "the repository's checkout `DIR`")
	fs.StringVar(&o.Out, "o", "", "keep each step's build log, gate report and Results in `DIR` (new or empty)")
	fs.StringVar(&o.Kernel, "kernel", "", "bisect a kernel: the `IMAGE` --build leaves in the worktree, or a debian: spec booted on both sides")
	fs.StringVar(&o.CmdlineFile, "cmdline-file", "", "with --kernel, the `FILE` in each worktree that holds the kernel's command line")
	verbose := fs.Bool("v", false, "each gate's "+verboseUsage)
	args, gateArgs := cmdline.CutDashes(args)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || o.Good == "" || o.Bad == "" {
		return usagef("want --good A --bad B --build CMD SCENARIO (see tailgate bisect -h)")
	}
	exe, err := os.Executable()
	if err != nil {
		return infra(err)
	}
	o.Scenario = pos[0]
	abs, _ := filepath.Abs(pos[0])
	if _, err := os.Stat(pos[0]); err != nil && o.Kernel != "" {
		abs = pos[0] // a built-in scenario, by name
	}
	if *verbose {
		gateArgs = append(gateArgs, "-v")
	}
	o.Gate = &bisect.ExecGate{Exe: exe, Scenario: abs, Args: gateArgs, Log: stderr}
	out, err := bisect.Run(ctx, o)
	switch {
	case errors.Is(err, bisect.ErrBadInput):
		return usagef("%w", err)
	case err != nil:
		return infra(err)
	}
	if err := out.WriteText(stdout, o.Out != ""); err != nil {
		return infra(err)
	}
	if out.Found() {
		return errRegression
	}
	return nil
}
