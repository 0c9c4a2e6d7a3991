package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

var completionUsage = `usage: tailgate completion bash

Prints a bash completion script: the commands, their subcommands and
their flags, and the built-in scenarios and scenario files (*.yaml) after
run, gate, matrix and calibrate. Load it in a shell (the first example),
or install it as a file (the second).

` + helpEnd(exits{"0 printed", exitBadInput + " (a shell other than bash)"},
	"source <(tailgate completion bash)",
	"tailgate completion bash > /etc/bash_completion.d/tailgate")

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

// scenarioCommands are the commands whose arguments are scenarios.
var scenarioCommands = []string{"run", "gate", "matrix", "calibrate"}

// writeBashCompletion writes the script for commands(), each command's
// (and subcommand's) flags as its -h lists them, and the catalog's
// scenarios for the commands that run them.
func writeBashCompletion(ctx context.Context, w io.Writer) error {
	var scenarioNames []string
	for _, s := range engine.Catalog().Scenarios {
		scenarioNames = append(scenarioNames, s.Name)
	}
	var cmds []cmdline.Command
	for _, c := range commands() {
		cc := cmdline.Command{Name: c.name, Subs: c.subs}
		if c.name == "completion" {
			cc.Args = []string{"bash"}
		}
		if slices.Contains(scenarioCommands, c.name) {
			cc.Operands, cc.Exts = scenarioNames, []string{"yaml", "yml"}
		}
		cmds = append(cmds, cc)
	}
	return cmdline.WriteBashCompletion(w, "tailgate", append(commandNames(), "help"), cmds, func(path ...string) string {
		var out bytes.Buffer
		run(ctx, append(path, "--help"), &out, io.Discard)
		return out.String()
	})
}
