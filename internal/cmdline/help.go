package cmdline

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/termwidth"
)

// Width is the most Columns a line of help takes: a terminal of 100
// Columns shows it unbroken.
const Width = 100

// HelpWidth is the Columns help written to w keeps to: w's width
// (termwidth: $COLUMNS, a terminal's, or a pipe's), at most Width.
func HelpWidth(w io.Writer) int {
	return min(termwidth.Of(w), Width)
}

// PrintHelp writes a usage text to w, each line wrapped to HelpWidth.
func PrintHelp(w io.Writer, text string) {
	fmt.Fprint(w, Wrap(text, HelpWidth(w)))
}

// Wrap breaks the lines of text wider than width at spaces. A
// synopsis line ("usage: tailgate run ...") goes on under its first
// argument; any other line under its own indentation. A word wider than
// a line stays whole.
func Wrap(text string, width int) string {
	var b strings.Builder
	lines := strings.SplitAfter(text, "\n")
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		if Columns(body) <= width {
			b.WriteString(line)
			continue
		}
		lead := body[:len(body)-len(strings.TrimLeft(body, " "))]
		indent := lead
		if i := synopsisArgs(body); i > 0 {
			indent = strings.Repeat(" ", i)
		}
		words := strings.Fields(body)
		if indent != lead {
			words = synopsisWords(words)
		}
		cur := lead
		first := true
		for _, word := range words {
			switch {
			case first:
				cur += word
				first = false
			case Columns(cur)+1+Columns(word) > width && strings.TrimSpace(cur) != "":
				b.WriteString(cur + "\n")
				cur = indent + word
			default:
				cur += " " + word
			}
		}
		b.WriteString(cur)
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// synopsisWords joins the words of a bracketed group ("[report flags]",
// "[--kernel SPEC | --vm]") so that a synopsis breaks between groups.
func synopsisWords(words []string) []string {
	var out []string
	depth := 0
	for _, w := range words {
		if depth > 0 {
			out[len(out)-1] += " " + w
		} else {
			out = append(out, w)
		}
		depth += strings.Count(w, "[") - strings.Count(w, "]")
		depth = max(depth, 0)
	}
	return out
}

// synopsisArgs is the column where a synopsis line's arguments start
// ("usage: tailgate history add STORE" → under STORE), or 0 for a line
// that is not a synopsis.
func synopsisArgs(line string) int {
	trimmed := strings.TrimPrefix(strings.TrimLeft(line, " "), "usage: ")
	if !strings.HasPrefix(trimmed, "tailgate ") {
		return 0
	}
	start := len(line) - len(trimmed)
	words := strings.Fields(trimmed)
	n := 2 // tailgate COMMAND
	if len(words) > 2 && isSubcommand(words[2]) {
		n = 3
	}
	col := start
	for _, w := range words[:min(n, len(words))] {
		col += len(w) + 1
	}
	return col
}

// isSubcommand says a synopsis's third word names a subcommand (history
// add), not an argument (SCENARIO, [flags]): it is lowercase letters.
func isSubcommand(word string) bool {
	return word != "" && strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") == ""
}

// Columns is the width of s on a terminal: a tab goes on to the next
// multiple of eight.
func Columns(s string) int {
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += 8 - n%8
			continue
		}
		n++
	}
	return n
}

// wrapFlagText wraps a flag's description to width for PrintFlags,
// which puts it after "    \t" (eight Columns) and each line after the
// first likewise.
func wrapFlagText(text string, width int) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		wrapped := strings.TrimSuffix(Wrap(para, width-8), "\n")
		out = append(out, wrapped)
	}
	return strings.Join(out, "\n")
}
