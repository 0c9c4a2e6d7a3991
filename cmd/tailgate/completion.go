package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

const completionUsage = `usage: tailgate completion bash

Prints a bash completion script: the commands, their subcommands and
their flags. Load it in a shell with

  source <(tailgate completion bash)

or install it as a file, e.g. /etc/bash_completion.d/tailgate.
`

func cmdCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("completion")
	setUsage(fs, stdout, completionUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "bash" {
		return usagef("want one shell: bash, got %q", strings.Join(pos, " "))
	}
	return writeBashCompletion(ctx, stdout)
}

// helpFlag is a flag as printFlags lists it.
var helpFlag = regexp.MustCompile(`(?m)^  (--?[a-z][a-z0-9-]*)`)

// commandFlags are the flags the help of a command (and subcommand) lists:
// completion offers what -h documents, from the same flag sets.
func commandFlags(ctx context.Context, path ...string) []string {
	var out bytes.Buffer
	run(ctx, append(path, "--help"), &out, io.Discard)
	var flags []string
	for _, m := range helpFlag.FindAllStringSubmatch(out.String(), -1) {
		if !slices.Contains(flags, m[1]) {
			flags = append(flags, m[1])
		}
	}
	return flags
}

// writeBashCompletion writes a script completing the first word from the
// commands, the second from a command's subcommands, and a word that
// starts with - from the flags of the command (or subcommand) typed; any
// other word is left to bash (files: Results, scenario YAML).
func writeBashCompletion(ctx context.Context, w io.Writer) error {
	var b strings.Builder
	b.WriteString("# bash completion for tailgate: source <(tailgate completion bash)\n")
	b.WriteString("_tailgate() {\n")
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]}\n")
	b.WriteString("\tlocal words= flags=\n")
	b.WriteString("\tif [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n\t\tflags=\"--help --version\"\n", strings.Join(append(commandNames(), "help"), " "))
	b.WriteString("\telif [[ $cmd == help && $COMP_CWORD -eq 2 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n", strings.Join(commandNames(), " "))
	b.WriteString("\telse\n\t\tcase $cmd in\n")
	for _, c := range commands() {
		switch {
		case c.name == "completion":
			fmt.Fprintf(&b, "\t\t%s) words=bash ;;\n", c.name)
		case len(c.subs) == 0:
			fmt.Fprintf(&b, "\t\t%s) flags=%q ;;\n", c.name, strings.Join(commandFlags(ctx, c.name), " "))
		default:
			fmt.Fprintf(&b, "\t\t%s)\n\t\t\tif [[ $COMP_CWORD -eq 2 ]]; then\n\t\t\t\twords=%q\n\t\t\telse\n\t\t\t\tcase $sub in\n",
				c.name, strings.Join(c.subs, " "))
			for _, s := range c.subs {
				fmt.Fprintf(&b, "\t\t\t\t%s) flags=%q ;;\n", s, strings.Join(commandFlags(ctx, c.name, s), " "))
			}
			b.WriteString("\t\t\t\tesac\n\t\t\tfi ;;\n")
		}
	}
	b.WriteString("\t\tesac\n\tfi\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	b.WriteString("\telif [[ -n $words ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\tfi\n")
	b.WriteString("}\n")
	b.WriteString("complete -o default -F _tailgate tailgate\n")
	_, err := io.WriteString(w, b.String())
	return err
}
