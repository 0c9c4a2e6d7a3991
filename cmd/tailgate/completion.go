package main

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

const completionUsage = `usage: tailgate completion bash

Prints a bash completion script: the commands, their subcommands and
their flags. Load it in a shell with

  source <(tailgate completion bash)

or install it as a file, e.g. /etc/bash_completion.d/tailgate.
`

func cmdCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("completion")
	cmdline.SetUsage(fs, stdout, completionUsage)
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "bash" {
		return usagef("want one shell: bash, got %q", strings.Join(pos, " "))
	}
	return writeBashCompletion(ctx, stdout)
}

// writeBashCompletion writes the script for commands(), each command's
// (and subcommand's) flags as its -h lists them.
func writeBashCompletion(ctx context.Context, w io.Writer) error {
	var cmds []cmdline.Command
	for _, c := range commands() {
		cc := cmdline.Command{Name: c.name, Subs: c.subs}
		if c.name == "completion" {
			cc.Args = []string{"bash"}
		}
		cmds = append(cmds, cc)
	}
	return cmdline.WriteBashCompletion(w, "tailgate", append(commandNames(), "help"), cmds, func(path ...string) string {
		var out bytes.Buffer
		run(ctx, append(path, "--help"), &out, io.Discard)
		return out.String()
	})
}
