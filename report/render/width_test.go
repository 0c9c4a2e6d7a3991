package render

import (
	"bytes"
	"fmt"
	"github.com/tailgate-ci/tailgate/report"
	"strings"
	"testing"
)

// widthCases are the text reports the narrow layouts are checked on, with
// what each must still show however narrow: the verdicts and the gated
// figures (the regressed p99's values, delta and interval).
func widthCases(t *testing.T) []struct {
	name string
	m    *report.Matrix
	want []string
} {
	return []struct {
		name string
		m    *report.Matrix
		want []string
	}{
		{"text", sampleReport().Matrix(), []string{
			"REGRESSION", "no change", "improvement", "not gated", "inconclusive",
			"41.5µs", "52.3µs", "+26.0%", "[+18.1%, +34.2%]", "±10%", "sched.wakeup", "syscall.getppid",
		}},
		{"evidence-text", evidenceReport().Matrix(), []string{
			"REGRESSION", "+26.0%", "[+18.1%, +34.2%]", "2.40ms", "tailgate 4102", "stress-ng-cpu 999 (prio 120)",
			"task stress-ng-cpu 2.35ms,", "anon_pipe_read ← vfs_read", "main.pong",
		}},
		{"matrix.text", sampleMatrix(t), []string{
			"REGRESSION", "no change", "not gated", "slow vs generic:", "generic-again vs generic:",
			"+43.3%", "[+35.1%, +52.0%]", "181µs", "126µs",
		}},
	}
}

// TestTextWidths lays the text reports out at 80 and 100 columns: no line
// is wider, and the verdicts and gated figures are all there
// (testdata/report/NAME.COLUMNS.golden).
func TestTextWidths(t *testing.T) {
	for _, tc := range widthCases(t) {
		for _, width := range []int{80, 100} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, width), func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteText(&b, tc.m, TextOptions{Width: width}); err != nil {
					t.Fatal(err)
				}
				checkWidth(t, b.String(), width)
				for _, w := range tc.want {
					if !strings.Contains(b.String(), w) {
						t.Errorf("lacks %q:\n%s", w, b.String())
					}
				}
				checkGolden(t, fmt.Sprintf("%s.%d", tc.name, width), b.Bytes())
			})
		}
	}
}

// TestTextWideUnchanged: a width the full rows fit is the unlimited
// layout, byte for byte, so pipes, files and golden files keep theirs.
func TestTextWideUnchanged(t *testing.T) {
	for _, tc := range widthCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var full, wide bytes.Buffer
			if err := WriteText(&full, tc.m, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			widest := 0
			for _, l := range strings.Split(full.String(), "\n") {
				widest = max(widest, textWidth(l))
			}
			if err := WriteText(&wide, tc.m, TextOptions{Width: widest}); err != nil {
				t.Fatal(err)
			}
			if full.String() != wide.String() {
				t.Errorf("at %d columns, the widest line's, the layout changed:\n%s", widest, wide.String())
			}
		})
	}
}

// TestTextVeryNarrow: below any table's width every line still keeps to
// it, the rows folded down to a column and lines of their own.
func TestTextVeryNarrow(t *testing.T) {
	for _, tc := range widthCases(t) {
		for _, width := range []int{20, 40, 60} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, width), func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteText(&b, tc.m, TextOptions{Width: width}); err != nil {
					t.Fatal(err)
				}
				checkWidth(t, b.String(), width)
				for _, w := range []string{"REGRESSION", "+26.0%", "+43.3%"} {
					if strings.Contains(tc.name, "matrix") == (w == "+43.3%") && !strings.Contains(b.String(), w) {
						t.Errorf("lacks %q:\n%s", w, b.String())
					}
				}
			})
		}
	}
}

// checkWidth fails for each line of text wider than width.
func checkWidth(t *testing.T, text string, width int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if n := textWidth(l); n > width {
			t.Errorf("line %d is %d columns, over %d: %q", i+1, n, width, l)
		}
	}
}

func TestWrapHanging(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     string
		width int
		hang  int
		want  []string
	}{
		{"fits", "a b c", 5, 2, []string{"a b c"}},
		{"unlimited", "a b c", 0, 2, []string{"a b c"}},
		{"breaks", "aa bb cc", 5, 0, []string{"aa bb", "cc"}},
		{"hangs", "aa bb cc dd", 6, 2, []string{"aa bb", "  cc", "  dd"}},
		{"keeps padding", "run:   xx yy", 9, 7, []string{"run:   xx", "    yy"}},
		{"cuts a long word", "abcdefgh", 3, 0, []string{"abc", "def", "gh"}},
		{"long word after text", "a bcdefg", 4, 0, []string{"a", "bcde", "fg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wrapHanging(tc.s, tc.width, tc.hang)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("wrapHanging(%q, %d, %d) = %q, want %q", tc.s, tc.width, tc.hang, got, tc.want)
			}
		})
	}
}
