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
	// Operands are the words every argument that is not a flag or a
	// flag's value may be (scenario names), and Exts the extensions of
	// the files it may be (yaml): both are offered, with directories.
	Operands []string
	Exts     []string
}

// helpFlag is a flag as PrintFlags lists it.
var helpFlag = regexp.MustCompile(`(?m)^  (--?[a-z][a-z0-9-]*)`)

// helpValueFlag is a flag PrintFlags lists with an argument.
var helpValueFlag = regexp.MustCompile(`(?m)^  (--?[a-z][a-z0-9-]*) \S.*\n    \t`)

// helpValueFlags are the flags a help text lists that take a value: the
// word after one is the value, left to bash, not an operand.
func helpValueFlags(help string) []string {
	var flags []string
	for _, m := range helpValueFlag.FindAllStringSubmatch(help, -1) {
		if !slices.Contains(flags, m[1]) {
			flags = append(flags, m[1])
		}
	}
	return flags
}

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
// for the command (or subcommand) typed. A command with Operands or Exts
// is offered them in any other word but a flag's value; any other word
// is left to bash (files: Results, a flag's value).
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
	b.WriteString("\tlocal prev=${COMP_WORDS[COMP_CWORD-1]} words= flags= values= exts=\n")
	b.WriteString("\tif [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n\t\tflags=\"--help --version\"\n", strings.Join(first, " "))
	b.WriteString("\telif [[ $cmd == help && $COMP_CWORD -eq 2 ]]; then\n")
	fmt.Fprintf(&b, "\t\twords=%q\n", strings.Join(names, " "))
	b.WriteString("\telse\n\t\tcase $cmd in\n")
	for _, c := range cmds {
		switch {
		case len(c.Args) > 0:
			fmt.Fprintf(&b, "\t\t%s) words=%s ;;\n", c.Name, strings.Join(c.Args, " "))
		case len(c.Operands) > 0 || len(c.Exts) > 0:
			h := help(c.Name)
			fmt.Fprintf(&b, "\t\t%s)\n\t\t\tflags=%q\n\t\t\tvalues=%q\n\t\t\twords=%q\n\t\t\texts=%q ;;\n", c.Name,
				strings.Join(helpFlags(h), " "), strings.Join(helpValueFlags(h), " "), strings.Join(c.Operands, " "), strings.Join(c.Exts, " "))
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
	// A flag's value (--kernel SPEC) is left to bash's default.
	b.WriteString("\telif [[ -n $values && \" $values \" == *\" $prev \"* ]]; then\n\t\treturn 0\n")
	b.WriteString("\telif [[ -n $words || -n $exts ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n")
	b.WriteString("\t\tif [[ -n $exts ]]; then\n\t\t\tlocal ext\n\t\t\tfor ext in $exts; do\n")
	b.WriteString("\t\t\t\tCOMPREPLY+=($(compgen -f -X \"!*.$ext\" -- \"$cur\"))\n\t\t\tdone\n")
	b.WriteString("\t\t\tCOMPREPLY+=($(compgen -d -- \"$cur\"))\n")
	// Outside a completion (a test's probe) compopt fails, harmlessly.
	b.WriteString("\t\t\tcompopt -o filenames 2>/dev/null\n\t\tfi\n\tfi\n")
	b.WriteString("}\n")
	fmt.Fprintf(&b, "complete -o default -F _%s %s\n", program, program)
	_, err := io.WriteString(w, b.String())
	return err
}
