package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/report"
)

// helpOf is the help "tailgate PATH --help" prints.
func helpOf(t *testing.T, path []string) string {
	t.Helper()
	code, stdout, stderr := runInProcess(t, append(slices.Clone(path), "--help")...)
	if code != exitPass || stderr != "" {
		t.Fatalf("tailgate %s --help: exit %d, stderr %q", strings.Join(path, " "), code, stderr)
	}
	return stdout
}

// helpSection is the lines of help after the line heading, up to the
// next blank line.
func helpSection(help, heading string) ([]string, bool) {
	lines := strings.Split(help, "\n")
	i := slices.Index(lines, heading)
	if i < 0 {
		return nil, false
	}
	var out []string
	for _, l := range lines[i+1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		out = append(out, l)
	}
	return out, true
}

// helpExamples are the examples of a help, each a command line, those
// that go on after " \" joined.
func helpExamples(help string) ([]string, error) {
	lines, ok := helpSection(help, "examples:")
	if !ok {
		return nil, errors.New(`no "examples:" section`)
	}
	var out []string
	cont := false
	for _, l := range lines {
		if n := cmdline.Columns(l); n > exampleWidth {
			return nil, fmt.Errorf("example line of %d columns, over %d: %s", n, exampleWidth, l)
		}
		text, more := strings.CutSuffix(strings.TrimSpace(l), " \\")
		if cont {
			out[len(out)-1] += " " + text
		} else {
			out = append(out, text)
		}
		cont = more
	}
	if len(out) == 0 {
		return nil, errors.New(`an empty "examples:" section`)
	}
	return out, nil
}

// shellWords splits the tailgate command of a shell line as sh would
// pass its words: from its "tailgate" (at the start, or after "(" or
// "sudo "), quotes removed, up to the end or an unquoted operator
// (| ; & < > ) or a comment). Variables and substitutions stay as
// written: a flag's parser takes them as the value they stand for.
func shellWords(line string) ([]string, error) {
	start := -1
	for _, lead := range []string{"", "sudo ", "<(", "$("} {
		if i := strings.Index(line, lead+"tailgate "); i >= 0 && (lead != "" || i == 0) {
			start = i + len(lead)
			break
		}
	}
	if start < 0 {
		return nil, errors.New(`does not run "tailgate"`)
	}
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line[start:] {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune("|;&<>)", r), r == '#' && !inWord:
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unbalanced %c", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// valueFlag is a flag a help lists with an argument: the word after it
// is its value.
var valueFlag = regexp.MustCompile(`(?m)^  (--?[a-z][a-z0-9-]*) \S`)

// parseExample runs the command line args (after "tailgate") through
// its command's own flag parser: args and --help, which stops the
// command once its flags are parsed. An unknown flag or a bad value is
// an error; so is a flag left without its value, which would take
// --help for one. Flags after "--" of a command that passes them to a
// gate ("-- GATE FLAGS") go through gate's parser too. It returns the
// first line of the help the parser printed.
func parseExample(t *testing.T, args []string) (string, error) {
	t.Helper()
	own, rest := cmdline.CutDashes(args)
	if len(own) == 0 {
		return "", errors.New("names no command")
	}
	path := own[:1]
	if own[0] == "--version" {
		path = []string{"version"}
	}
	if i := slices.IndexFunc(commands(), func(c command) bool { return c.name == path[0] }); i >= 0 && len(commands()[i].subs) > 0 && len(own) > 1 {
		path = own[:2]
	}
	help := helpOfArgs(t, path)
	if help == "" {
		return "", fmt.Errorf("tailgate %s has no help", strings.Join(path, " "))
	}
	if err := checkLastValue(own, help); err != nil {
		return "", err
	}
	first, err := parseOnly(t, own)
	if err != nil {
		return "", err
	}
	if rest != nil {
		if !strings.Contains(help, "-- GATE FLAGS") {
			return "", fmt.Errorf("takes no flags after --, yet is given %q", rest)
		}
		if err := checkLastValue(rest, helpOfArgs(t, []string{"gate"})); err != nil {
			return "", fmt.Errorf("after --: %w", err)
		}
		if _, err := parseOnly(t, append([]string{"gate"}, rest...)); err != nil {
			return "", fmt.Errorf("after --: %w", err)
		}
	}
	return first, nil
}

// helpOfArgs is helpOf for a path that may not be a command: "" then.
func helpOfArgs(t *testing.T, path []string) string {
	t.Helper()
	code, stdout, stderr := runInProcess(t, append(slices.Clone(path), "--help")...)
	if code != exitPass || stderr != "" {
		return ""
	}
	return stdout
}

// checkLastValue refuses args whose last word is a flag help lists with
// a value.
func checkLastValue(args []string, help string) error {
	last := args[len(args)-1]
	for _, m := range valueFlag.FindAllStringSubmatch(help, -1) {
		if last == m[1] || last == "-"+m[1] {
			return fmt.Errorf("%s is left without its value", last)
		}
	}
	return nil
}

// parseOnly runs args and --help: exit 0 and the help, or the error the
// flag parser said.
func parseOnly(t *testing.T, args []string) (string, error) {
	t.Helper()
	code, stdout, stderr := runInProcess(t, append(slices.Clone(args), "--help")...)
	if code != exitPass || stderr != "" {
		return "", fmt.Errorf("exit %d: %s", code, strings.TrimSpace(stderr))
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "usage: tailgate ") {
		return "", fmt.Errorf("printed no usage: %q", first)
	}
	return first, nil
}

// TestHelpExamplesParse checks every command's and subcommand's help
// (and tailgate's own) has examples, each a command line of its command
// whose flags and values its own flag parser takes.
func TestHelpExamplesParse(t *testing.T) {
	for _, path := range helpPaths() {
		t.Run("tailgate "+strings.Join(path, " "), func(t *testing.T) {
			help := helpOf(t, path)
			exs, err := helpExamples(help)
			if err != nil {
				t.Fatal(err)
			}
			for _, ex := range exs {
				words, err := shellWords(ex)
				if err != nil {
					t.Errorf("example %q: %v", ex, err)
					continue
				}
				args := words[1:]
				if len(path) > 0 && (len(args) == 0 || (args[0] != path[0] && !(path[0] == "version" && args[0] == "--version"))) {
					t.Errorf("example %q in tailgate %s's help is another command's", ex, path[0])
					continue
				}
				first, err := parseExample(t, args)
				if err != nil {
					t.Errorf("example %q: %v", ex, err)
					continue
				}
				if err := checkExampleValues(args); err != nil {
					t.Errorf("example %q: %v", ex, err)
				}
				// The parser that took it is the one of the help it is in
				// (a subcommand's, or one of its command's).
				if own, _, _ := strings.Cut(help, "\n"); len(path) == 2 && first != own {
					t.Errorf("example %q is parsed as %q, not as this help's %q", ex, first, own)
				}
			}
		})
	}
}

// exampleValues are the checks commands make of flag values after their
// parser took them, keyed by "COMMAND SUBCOMMAND --flag": the command's
// own check, so an example the parser takes is refused here as the
// command would refuse it. A value that is a shell variable stands for
// one that passes.
var exampleValues = map[string]func(string) error{
	"history add --commit": history.CheckFullCommit,
	"history add --time": func(v string) error {
		_, err := history.ParseTime(v)
		return err
	},
	"history prune --older-than": func(v string) error {
		_, err := history.NewPolicy(0, v)
		return err
	},
	"history changes --percentile": func(v string) error {
		return report.CheckSelection(report.Selection{Percentiles: []string{v}})
	},
	"history changes --level": func(v string) error {
		if l, err := strconv.ParseFloat(v, 64); err != nil || l <= 0 || l >= 1 {
			return fmt.Errorf("want a rate between 0 and 1")
		}
		return nil
	},
}

// checkExampleValues runs exampleValues' checks on the values args gives
// its flags.
func checkExampleValues(args []string) error {
	own, _ := cmdline.CutDashes(args)
	prefix := own[0]
	if len(own) > 1 && !strings.HasPrefix(own[1], "-") {
		prefix += " " + own[1]
	}
	for i := 0; i+1 < len(own); i++ {
		name, value, ok := strings.Cut(own[i], "=")
		if !ok {
			value = own[i+1]
		}
		check := exampleValues[prefix+" "+name]
		if check == nil || strings.HasPrefix(value, "$") {
			continue
		}
		if err := check(value); err != nil {
			return fmt.Errorf("%s %s: %w", name, value, err)
		}
	}
	return nil
}

// TestHelpExampleCheckerRefuses checks the checker of examples fails the
// mistakes an example could make.
func TestHelpExampleCheckerRefuses(t *testing.T) {
	for _, ex := range []string{
		"tailgate run syscall-read --no-such-flag",
		"tailgate run syscall-read --trials 0",
		"tailgate run syscall-read --trials",
		"tailgate history ad STORE r.json --commit abc",
		"tailgate history add STORE r.json --commit 4d7ad6fe6c15",
		"tailgate history add STORE r.json --commit=$SHA --time yesterday",
		"tailgate history prune STORE --older-than 3 months",
		"tailgate history changes STORE --percentile p42.5x",
		"tailgate history changes STORE --level 5",
		"tailgate history changes ./history --level",
		"tailgate bisect --good A --bad B --build make s.yaml -- --budget soon",
		"tailgate show r.json -- --format csv",
	} {
		words, err := shellWords(ex)
		if err != nil {
			t.Fatalf("%q: %v", ex, err)
		}
		if _, err := parseExample(t, words[1:]); err == nil && checkExampleValues(words[1:]) == nil {
			t.Errorf("example %q passes the checker", ex)
		}
	}
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`tailgate run a --trials 5`, "run|a|--trials|5"},
		{`tailgate gate --variant 'b:x=1 2' --kernel "a b"`, "gate|--variant|b:x=1 2|--kernel|a b"},
		{`source <(tailgate completion bash)`, "completion|bash"},
		{`tailgate completion bash > /etc/x`, "completion|bash"},
		{`tailgate history add git:.#h r.json --commit "$GITHUB_SHA" # note`, "history|add|git:.#h|r.json|--commit|$GITHUB_SHA"},
	} {
		words, err := shellWords(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := strings.Join(words[1:], "|"); got != c.want || words[0] != "tailgate" {
			t.Errorf("%q: %q, want tailgate|%s", c.in, strings.Join(words, "|"), c.want)
		}
	}
}

// exitEntry is one line of an "exit codes:" section: "  CODE what".
var exitEntry = regexp.MustCompile(`^  ([0-9]) \S`)

// regressionExits are the helps whose command returns exit 1: it gates,
// or confirms a regression.
var regressionExits = []string{"", "compare", "gate", "matrix", "bisect", "history", "history confirm"}

// TestHelpExitCodes checks every help lists the exit codes its command
// returns, one a line, in order: 0, 2 (a bad flag) and 3 where it can,
// 1 exactly where it gates.
func TestHelpExitCodes(t *testing.T) {
	for _, path := range helpPaths() {
		name := strings.Join(path, " ")
		t.Run("tailgate "+name, func(t *testing.T) {
			lines, ok := helpSection(helpOf(t, path), "exit codes:")
			if !ok {
				t.Fatal(`no "exit codes:" section`)
			}
			var codes []int
			for _, l := range lines {
				if n := cmdline.Columns(l); n > exampleWidth {
					t.Errorf("%d columns, over %d: %s", n, exampleWidth, l)
				}
				if m := exitEntry.FindStringSubmatch(l); m != nil {
					c, _ := strconv.Atoi(m[1])
					codes = append(codes, c)
				} else if !strings.HasPrefix(l, "    ") {
					t.Errorf("line %q is neither an exit code nor the rest of one", l)
				}
			}
			if !slices.IsSorted(codes) || len(slices.Compact(slices.Clone(codes))) != len(codes) {
				t.Errorf("exit codes %v, want each once, in order", codes)
			}
			for c := range 4 {
				want := c != 1 || slices.Contains(regressionExits, name)
				if c == 3 && !slices.Contains(codes, 3) {
					continue // a command that touches nothing outside itself
				}
				if slices.Contains(codes, c) != want {
					t.Errorf("exit codes %v: %d listed %v, want %v", codes, c, !want, want)
				}
			}
		})
	}
}
