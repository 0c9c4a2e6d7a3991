package render

import (
	"strings"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
)

// oneLine returns s with every character that would end its line or hide
// text written out as a Go escape such as \n or \u202e (plaintext.Line).
// Names, kernel releases and warnings come from Result files and guests:
// each must stay one visible line of what it says, in a table cell, a
// list item or an annotation.
func oneLine(s string) string { return plaintext.Line(s) }

// mdReplacer escapes what Markdown, GitHub's tables and inline HTML would
// read as markup: a pipe ends a cell, brackets make links and images,
// backticks code, and < or & HTML. What GitHub turns into links of its
// own gets a zero-width space, as an entity, where it breaks the link
// and shows nothing: after an @ (a mention would notify that user or
// team from a report posted as a comment; an e-mail address), before
// :// (a bare URL) and after www.
var mdReplacer = strings.NewReplacer(append([]string{`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "~", `\~`}, unlinked...)...)

// unlinked are the replacements that keep GitHub from making a mention or
// a link of text: a zero-width space, written as an entity, inside each.
var unlinked = []string{"@", "@" + zwsp, "://", zwsp + "://", "www.", "www" + zwsp + "."}

const zwsp = "&#8203;"

// mdEscape is s as one line of literal Markdown text. Every field of a
// Markdown report that comes from a Result file or a guest goes through
// it (or mdCode, htmlEscape, which share oneLine).
func mdEscape(s string) string { return mdReplacer.Replace(oneLine(s)) }

// mdCode is s as a code span: fenced with one backtick more than its
// longest run of them, so that none in s ends it, and with pipes escaped,
// as GitHub's tables want even inside code.
func mdCode(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", `\|`)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

var htmlReplacer = strings.NewReplacer(append([]string{"&", "&amp;", "<", "&lt;", ">", "&gt;"}, unlinked...)...)

// htmlEscape is s as one line of text inside an HTML element, where
// Markdown escapes are not read.
func htmlEscape(s string) string { return htmlReplacer.Replace(oneLine(s)) }
