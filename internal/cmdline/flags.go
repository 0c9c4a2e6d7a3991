// Package cmdline is the command-line plumbing every tailgate command shares:
// flag sets that print nothing by themselves, flags after arguments, help
// wrapped to the terminal (at most Width columns) with the flags spelled
// --name, and a bash completion script. The commands, their flags and
// their help text stay in cmd/tailgate.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// Error is a bad command line: a flag unknown, malformed or empty.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// NewFlagSet returns a flag set that prints nothing by itself: a bad flag
// is reported once, in one line, by run; -h prints the usage set with
// SetUsage.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("tailgate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// SetUsage makes -h print text and the flags to w.
func SetUsage(fs *flag.FlagSet, w io.Writer, text string) {
	fs.Usage = func() {
		PrintHelp(w, text)
		PrintFlags(w, fs)
	}
}

// PrintFlags writes fs's flags as flag.PrintDefaults does, but spelled as
// the usage lines and the README spell them: --name, and -o only for a
// one-letter name.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	width := HelpWidth(w)
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		line := "  " + FlagName(f.Name)
		if arg != "" {
			line += " " + arg
		}
		if !isZeroFlag(f) {
			if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.String {
				text += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				text += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		text = strings.ReplaceAll(wrapFlagText(text, width), "\n", "\n    \t")
		fmt.Fprintf(w, "%s\n    \t%s\n", line, text)
	})
}

// FlagName spells a flag as the usage does: -o, --trials.
func FlagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Given lists which of the flags names were set on fs (none when fs is
// nil), spelled as the usage does (FlagName).
func Given(fs *flag.FlagSet, names ...string) []string {
	var set []string
	if fs != nil {
		fs.Visit(func(fl *flag.Flag) {
			if slices.Contains(names, fl.Name) {
				set = append(set, FlagName(fl.Name))
			}
		})
	}
	return set
}

// Append is a flag.Func that appends each value, as parse reads it, to
// dst: a repeatable flag.
func Append[T any](dst *[]T, parse func(string) (T, error)) func(string) error {
	return func(s string) error {
		v, err := parse(s)
		if err != nil {
			return err
		}
		*dst = append(*dst, v)
		return nil
	}
}

// List is a flag.Func that appends each item of a comma list to dst,
// spaces trimmed, empty items dropped: a flag repeatable or a list.
func List(dst *[]string) func(string) error {
	return func(s string) error {
		for _, x := range strings.Split(s, ",") {
			if x = strings.TrimSpace(x); x != "" {
				*dst = append(*dst, x)
			}
		}
		return nil
	}
}

// isZeroFlag says f's default is its type's zero value, which the usage
// does not repeat: the test flag.PrintDefaults makes.
func isZeroFlag(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	// A Value whose String method needs fields a zero value lacks: show
	// the default.
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}

// Parse parses flags that may come after positional arguments
// ("tailgate run syscall-read --trials 3"); "--" ends the flags. On -h it
// prints the usage and returns flag.ErrHelp, which a command takes for
// success, silently; a bad flag is an *Error.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on errors too
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, err
			}
			return nil, &Error{fmt.Errorf("%v%s (see tailgate %s -h)", err, didYouMean(fs, err), strings.TrimPrefix(fs.Name(), "tailgate "))}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, checkEmptyFlags(fs)
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), checkEmptyFlags(fs)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// didYouMean is "; did you mean --trials?" when err is the flag
// package's for a flag fs does not define and one of its flags is spelt
// close to it; "" otherwise.
func didYouMean(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	if len(name) < 3 {
		return "" // every one-letter flag is one edit away
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	near := suggest.Near(name, names, 1)
	if len(near) == 0 {
		return ""
	}
	dash := "--"
	if len(near[0]) == 1 {
		dash = "-"
	}
	return "; did you mean " + dash + near[0] + "?"
}

// emptyRefused are the flags, of any command, whose empty value is what
// "not given" is: given explicitly empty (-o "$UNSET"), they would be
// ignored without a word, writing no file or measuring tailgate's own
// workloads in place of a group. The hint says what to give.
var emptyRefused = map[string]string{
	"o":      "give a FILE, or - for standard output",
	"output": "give a FILE, or - for standard output",
	"cgroup": "give a group of the cgroup v2 hierarchy, e.g. /system.slice/ssh.service (see /proc/PID/cgroup)",
}

// checkEmptyFlags refuses a flag of emptyRefused given as "".
func checkEmptyFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if hint, ok := emptyRefused[f.Name]; ok && err == nil && f.Value.String() == "" {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			err = &Error{fmt.Errorf("%s%s is empty; %s", dash, f.Name, hint)}
		}
	})
	return err
}

// CutDashes splits args at the first "--": the command's own arguments
// before it, and those after it, which go to another command (nil when
// there is no "--").
func CutDashes(args []string) (own, rest []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}
