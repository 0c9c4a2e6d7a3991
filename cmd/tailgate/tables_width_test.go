package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
)

// overWidth lists the lines of text wider than width, for an error.
func overWidth(text string, width int) []string {
	var over []string
	for i, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			over = append(over, fmt.Sprintf("line %d, %d columns: %q", i+1, n, l))
		}
	}
	return over
}

// TestTablesFitWidth runs each command that prints a table, on this
// machine where it measures, in a terminal of 80 columns ($COLUMNS) and
// piped (100 columns): no line of standard output is wider.
// baseline show and kernels list: TestListWidths.
func TestTablesFitWidth(t *testing.T) {
	const a = "../../report/testdata/trials-syscall-read.json"
	const b = "../../report/testdata/trials-pipe-pingpong.json"
	// Trials long enough that a busy machine still runs their workloads.
	short := []string{"--trials", "2", "--duration", "200ms", "--warmup", "50ms"}
	for _, args := range [][]string{
		{"doctor"},
		{"list"},
		{"show", a},
		{"compare", a, a},
		{"compare", b, b},
		append([]string{"run", "tcp-rr-small", "syscall-read"}, short...),
		append([]string{"matrix", "tcp-rr-small", "--variant", "a", "--variant", "b"}, short...),
		append([]string{"calibrate", "syscall-read", "--runs", "2"}, short...),
	} {
		for _, columns := range []int{80, 0} {
			t.Run(fmt.Sprintf("%s/COLUMNS=%d", args[0], columns), func(t *testing.T) {
				width := columns
				t.Setenv("COLUMNS", "")
				if columns > 0 {
					t.Setenv("COLUMNS", fmt.Sprint(columns))
				} else {
					width = termwidth.Piped
				}
				code, stdout, stderr := runInProcess(t, args...)
				// doctor says 3 when a check host runs need fails; its
				// table is printed whatever it says.
				if code != exitPass && !(args[0] == "doctor" && code == exitInfra) {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if strings.Count(stdout, "\n") < 3 {
					t.Fatalf("no table:\n%s", stdout)
				}
				for _, l := range overWidth(stdout, width) {
					t.Errorf("over %d columns: %s", width, l)
				}
			})
		}
	}
}

// TestGateProgressPipedFits runs a real gate of two host variants of
// tcp-rr-small (the scenario with the most metrics) with stderr piped: no
// line of its progress is over progress.MaxLine, there is a line per
// trial and per look and few more, and the report fits 100 columns.
func TestGateProgressPipedFits(t *testing.T) {
	t.Setenv("COLUMNS", "")
	const rounds = 6
	code, stdout, stderr := runInProcess(t, "gate", "tcp-rr-small", "--variant", "base", "--variant", "head",
		"--trials", fmt.Sprint(rounds), "--duration", "100ms", "--warmup", "0s")
	if code != exitPass && code != exitRegression {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, l := range overWidth(stderr, progress.MaxLine) {
		t.Errorf("stderr over %d characters: %s", progress.MaxLine, l)
	}
	for _, l := range overWidth(stdout, termwidth.Piped) {
		t.Errorf("stdout over %d columns: %s", termwidth.Piped, l)
	}
	trials, looks := strings.Count(stderr, "trial done"), strings.Count(stderr, "] look ")
	if trials != 2*rounds || looks < 1 {
		t.Errorf("%d trial lines, %d looks for %d rounds of two:\n%s", trials, looks, rounds, stderr)
	}
	// The pairing, the slices, the plan of looks, why it stopped.
	if n := strings.Count(stderr, "\n"); n > trials+looks+4 {
		t.Errorf("%d lines for %d trials and %d looks:\n%s", n, trials, looks, stderr)
	}
	if strings.Contains(stderr, "irq.hard") {
		t.Errorf("a trial's line names metrics that are not gated:\n%s", stderr)
	}
}
