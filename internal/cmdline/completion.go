package cmdline

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Command is what completion knows of a command: its name, its
// subcommands, and the words its first argument takes when it has no
// subcommands (completion's own "bash").
type Command struct {
	Name string
	Subs []string
	Args []string
}

// helpFlag is a flag as PrintFlags lists it.
var helpFlag = regexp.MustCompile(`(?m)^  (--?[a-z][a-z0-9-]*)`)

// helpFlags are the flags a help text lists: completion offers what -h
// documents, from the same flag sets.
func helpFlags(help string) []string {
	var flags []string
	for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
		if !slices.Contains(flags, m[1]) {
			flags = append(flags, m[1])
		}
	}
	return flags
}

// WriteBashCompletion writes a script for program completing the first
// word from first (the commands), the second from a command's
// subcommands, and a word that starts with - from the flags help lists
// for the command (or subcommand) typed; any other word is left to bash
// (files: Results, scenario YAML).
func WriteBashCompletion(w io.Writer, program string, first []string, cmds []Command, help func(path ...string) string) error {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	flags := func(path ...string) string { return strings.Join(helpFlags(help(path...)), " ") }
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s: source <(%s completion bash)\n", program, program)
	fmt.Fprintf(&b, "_%s() {\n", program)
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]}\n")
	b.WriteString("\tlocal words= flags=\n")
	b.WriteString("\tif [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n\t\tflags=\"--help --version\"\n", strings.Join(first, " "))
	b.WriteString("\telif [[ $cmd == help && $COMP_CWORD -eq 2 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n", strings.Join(names, " "))
	b.WriteString("\telse\n\t\tcase $cmd in\n")
	for _, c := range cmds {
		switch {
		case len(c.Args) > 0:
			fmt.Fprintf(&b, "\t\t%s) words=%s ;;\n", c.Name, strings.Join(c.Args, " "))
		case len(c.Subs) == 0:
			fmt.Fprintf(&b, "\t\t%s) flags=%q ;;\n", c.Name, flags(c.Name))
		default:
			fmt.Fprintf(&b, "\t\t%s)\n\t\t\tif [[ $COMP_CWORD -eq 2 ]]; then\n\t\t\t\twords=%q\n\t\t\telse\n\t\t\t\tcase $sub in\n",
				c.Name, strings.Join(c.Subs, " "))
			for _, s := range c.Subs {
				fmt.Fprintf(&b, "\t\t\t\t%s) flags=%q ;;\n", s, flags(c.Name, s))
			}
			b.WriteString("\t\t\t\tesac\n\t\t\tfi ;;\n")
		}
	}
	b.WriteString("\t\tesac\n\tfi\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	b.WriteString("\telif [[ -n $words ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\tfi\n")
	b.WriteString("}\n")
	fmt.Fprintf(&b, "complete -o default -F _%s %s\n", program, program)
	_, err := io.WriteString(w, b.String())
	return err
}
