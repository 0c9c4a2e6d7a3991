package cmdline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote is s as one word of a shell's command line: as it is when no
// character of it needs quoting, else single-quoted (a --kernel with its
// command line, a sysctl's value with spaces). A word holding a control
// or non-printing character is written $'…' with that character escaped
// (bash, zsh and ksh read it back as it was), so a carriage return from a
// record cannot make the printed line differ from what runs.
func Quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !shellSafe(r) }) {
		return s
	}
	if strings.ContainsFunc(s, hidden) {
		return ansiQuote(s)
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hidden says r would not show as itself on a terminal.
func hidden(r rune) bool { return r == unicode.ReplacementChar || !unicode.IsPrint(r) && r != ' ' }

// ansiQuote is s as a $'…' word, every character that hidden finds, and
// the quote and backslash, escaped.
func ansiQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i]) // a byte that is not UTF-8
		case r < 0x80 && hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String() + "'"
}

// shellSafe says r needs no quoting in a shell word.
func shellSafe(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
}
