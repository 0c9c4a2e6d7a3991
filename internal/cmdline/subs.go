package cmdline

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// Sub is a subcommand: its name (and another it answers to, if any), its
// synopsis (what follows "tailgate COMMAND NAME" in the usage), what it
// does (its own usage says), and what runs it, given the flag set that
// usage is made for.
type Sub struct {
	Name, Alias, Synopsis, About string
	Run                          func(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error
}

// SubNames are the subcommands' names, in order.
func SubNames(subs []Sub) []string {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.Name
	}
	return names
}

// SubUsage is a command's usage: a synopsis line for each subcommand, then
// about, what the command itself says.
func SubUsage(command string, subs []Sub, about string) string {
	var b strings.Builder
	lead := "usage:"
	for _, s := range subs {
		fmt.Fprintln(&b, strings.TrimRight(fmt.Sprintf("%s tailgate %s %s %s", lead, command, s.Name, s.Synopsis), " "))
		lead = "      "
	}
	return b.String() + about
}

// Subcommands are a command's subcommands: the command's name, its Subs,
// and what the command itself says after their synopses (SubUsage).
type Subcommands struct {
	Command string
	Subs    []Sub
	About   string
}

// Dispatch runs the subcommand that args[0] names, with a flag set whose
// -h prints the subcommand's own usage. -h, --help or help prints the
// command's (SubUsage) on stdout. No subcommand, or one it does not have,
// is an Error of one line.
func (c Subcommands) Dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names := SubNames(c.Subs)
	if len(args) == 0 {
		return &Error{Err: fmt.Errorf("name a subcommand: %s (tailgate %s -h)", strings.Join(names, ", "), c.Command)}
	}
	switch args[0] {
	case "-h", "--help", "help":
		PrintHelp(stdout, SubUsage(c.Command, c.Subs, c.About))
		return nil
	}
	for _, s := range c.Subs {
		if args[0] == s.Name || (s.Alias != "" && args[0] == s.Alias) {
			fs := NewFlagSet(c.Command + " " + s.Name)
			SetUsage(fs, stdout, fmt.Sprintf("usage: tailgate %s %s\n\n%s\n\n", c.Command, strings.TrimRight(s.Name+" "+s.Synopsis, " "), s.About))
			return s.Run(ctx, fs, args[1:], stdout, stderr)
		}
	}
	return UnknownSub(c.Command, args[0], names)
}

// UnknownSub is the one line a mistyped subcommand of command gets: the
// names it is near, else all of subs.
func UnknownSub(command, name string, subs []string) error {
	if near := suggest.Near(name, subs, 2); len(near) > 0 {
		return &Error{Err: fmt.Errorf("unknown subcommand %q; did you mean %s? (tailgate %s -h)", name, strings.Join(near, " or "), command)}
	}
	return &Error{Err: fmt.Errorf("unknown subcommand %q; want %s (tailgate %s -h)", name, strings.Join(subs, ", "), command)}
}
