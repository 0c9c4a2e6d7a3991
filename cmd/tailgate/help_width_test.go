package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// helpPaths is every command and subcommand, as "tailgate PATH --help"
// takes them.
func helpPaths() [][]string {
	paths := [][]string{{}}
	for _, c := range commands() {
		paths = append(paths, []string{c.name})
		for _, s := range c.subs {
			paths = append(paths, []string{c.name, s})
		}
	}
	return paths
}

// TestHelpFitsWidth runs the top help and every command's and
// subcommand's --help, in a terminal of 80 columns ($COLUMNS) and piped
// (100 columns), and checks each line fits, tabs expanded.
func TestHelpFitsWidth(t *testing.T) {
	for _, columns := range []int{80, 0} {
		width := columns
		if width == 0 {
			width = termwidth.Piped
		}
		for _, path := range helpPaths() {
			args := append(append([]string{}, path...), "--help")
			t.Run(fmt.Sprintf("%s/COLUMNS=%d", strings.Join(args, " "), columns), func(t *testing.T) {
				t.Setenv("COLUMNS", "")
				if columns > 0 {
					t.Setenv("COLUMNS", fmt.Sprint(columns))
				}
				code, stdout, stderr := runInProcess(t, args...)
				if code != exitPass || stderr != "" {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if !strings.HasPrefix(stdout, "usage: tailgate") {
					t.Errorf("does not start with its usage:\n%s", stdout)
				}
				for _, line := range strings.Split(stdout, "\n") {
					if n := cmdline.Columns(line); n > width {
						t.Errorf("%d columns, want at most %d: %s", n, width, line)
					}
				}
			})
		}
	}
}

// TestHelpSubcommandOwnUsage checks a subcommand's help is its own, not
// its parent's, however it is asked for.
func TestHelpSubcommandOwnUsage(t *testing.T) {
	for _, c := range commands() {
		for _, s := range c.subs {
			want := "usage: tailgate " + c.name + " " + s
			for _, args := range [][]string{{"help", c.name, s}, {c.name, s, "--help"}, {c.name, s, "-h"}} {
				code, stdout, stderr := runInProcess(t, args...)
				if code != exitPass || stderr != "" {
					t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
					continue
				}
				first, _, _ := strings.Cut(stdout, "\n")
				if first != want && !strings.HasPrefix(first, want+" ") {
					t.Errorf("%v: first line %q, want it to start %q", args, first, want)
				}
			}
		}
	}
}

// TestHelpGitHubComment checks github comment --help prints its usage and
// flags (it printed nothing).
func TestHelpGitHubComment(t *testing.T) {
	code, stdout, _ := runInProcess(t, "github", "comment", "--help")
	if code != exitPass {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"usage: tailgate github comment", "--body FILE", "--marker TEXT", "--pr N", "--repo OWNER/NAME"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("lacks %q:\n%s", want, stdout)
		}
	}
}

// TestHelpSaysWhatCommandsDo checks the help texts that said otherwise than
// the commands do: calibrate's runs, gate's two modes and synopsis,
// matrix's alternating rounds, --variant's keys.
func TestHelpSaysWhatCommandsDo(t *testing.T) {
	_, top, _ := runInProcess(t, "--help")
	_, gate, _ := runInProcess(t, "gate", "--help")
	_, matrix, _ := runInProcess(t, "matrix", "--help")
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, tc := range []struct {
		name, text string
		want, not  []string
	}{
		{"tailgate --help", top, []string{"K times (--runs, default 3)", "gate two targets in one job (--kernel A --kernel B), or a run against a stored baseline"}, []string{"twice"}},
		{"gate --help", gate, []string{
			"usage: tailgate gate [SCENARIO...] --kernel BASE --kernel HEAD",
			"tailgate gate [SCENARIO...] --variant BASE --variant HEAD",
			"dir=PATH", "env.NAME=VALUE",
		}, []string{"BASE HEAD ["}},
		{"matrix --help", matrix, []string{"round 1: A B C, round 2: C B A", "dir=PATH", "env.NAME=VALUE"}, []string{"round 2: A B C"}},
	} {
		text := flat(tc.text)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q", tc.name, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(text, n) {
				t.Errorf("%s still says %q", tc.name, n)
			}
		}
	}
}

// TestErrorsNameCommandOnce checks an error is prefixed with its command
// (and subcommand) once: no "list: list:".
func TestErrorsNameCommandOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "nosuch"}, "tailgate list: unknown argument \"nosuch\""},
		{[]string{"show"}, "tailgate show: name one Result file"},
		{[]string{"github", "comment"}, "tailgate github comment: --body FILE is required"},
		{[]string{"baseline", "show"}, "tailgate baseline show: want one PATH"},
		{[]string{"kernels", "fetch"}, "tailgate kernels fetch: want one SPEC"},
		{[]string{"history", "check"}, "tailgate history check: want STORE"},
		{[]string{"history", "ad"}, "tailgate history: unknown subcommand \"ad\"; did you mean add?"},
	} {
		code, _, stderr := runInProcess(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: stderr %q, want it to start %q", tc.args, stderr, tc.want)
		}
		if strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: want one line, got %q", tc.args, stderr)
		}
		// "tailgate list: list: ..." or "tailgate github: github comment: ...".
		segs := strings.Split(strings.TrimSpace(stderr), ": ")
		for i := 0; i+1 < len(segs); i++ {
			words := strings.Fields(segs[i])
			if len(words) > 0 {
				last := words[len(words)-1]
				if segs[i+1] == last || strings.HasPrefix(segs[i+1], last+" ") {
					t.Errorf("%v: doubled prefix in %q", tc.args, stderr)
				}
			}
		}
	}
}

// TestSuggestCommand checks a mistyped command gets a did-you-mean, one
// line and exit 2.
func TestSuggestCommand(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"rn", "did you mean run?"},
		{"histroy", "did you mean history?"},
		{"gaet", "did you mean gate?"},
		{"calibrat", "did you mean calibrate?"},
	} {
		code, stdout, stderr := runInProcess(t, tc.typed)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d", tc.typed, code, exitUsage)
		}
		if stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: want one line on stderr, got stdout %q stderr %q", tc.typed, stdout, stderr)
		}
		if !strings.Contains(stderr, `unknown command "`+tc.typed+`"`) || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: stderr %q, want %q", tc.typed, stderr, tc.want)
		}
	}
	if _, _, stderr := runInProcess(t, "zzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a name near nothing got a suggestion: %q", stderr)
	}
}

// TestCompletionBash checks the script is valid bash, lists every command
// and subcommand and a command's flags, and completes as bash would.
func TestCompletionBash(t *testing.T) {
	code, script, stderr := runInProcess(t, "completion", "bash")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range commands() {
		if !strings.Contains(script, c.name) {
			t.Errorf("script lacks command %s", c.name)
		}
		for _, s := range c.subs {
			if !strings.Contains(script, s) {
				t.Errorf("script lacks %s %s", c.name, s)
			}
		}
	}
	for _, f := range []string{"--baseline", "--budget", "--variant", "--replace-unreadable", "--body"} {
		if !strings.Contains(script, f) {
			t.Errorf("script lacks flag %s", f)
		}
	}
	testenv.Need(t, testenv.Tool("bash", ""))
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tailgate.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	// Complete a few command lines as bash's programmable completion
	// would, and read COMPREPLY.
	for _, tc := range []struct {
		words string
		want  []string
	}{
		{"tailgate hi", []string{"history"}},
		{"tailgate baseline s", []string{"save", "show"}},
		{"tailgate gate --bud", []string{"--budget"}},
		{"tailgate baseline save --rep", []string{"--replace-unreadable"}},
		{"tailgate help kern", []string{"kernels"}},
	} {
		probe := `source "$1"; COMP_WORDS=($2); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _tailgate; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, "-c", probe, "probe", path, tc.words).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", tc.words, err, out)
			continue
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
	if code, _, _ := runInProcess(t, "completion", "zsh"); code != exitUsage {
		t.Errorf("completion zsh: exit %d, want %d", code, exitUsage)
	}
}
