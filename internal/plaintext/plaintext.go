// Package plaintext makes text that comes from files and guests (Result
// fields: names, kernel releases, stacks, messages) safe to print where a
// person or a CI runner reads it: a terminal, a CI log.
//
// A control character can rewrite a terminal (ESC sequences) or start a
// line of its own; a line of a CI log that begins with "::" (or "##[")
// is a workflow command to GitHub's runner, which trims leading space
// before it looks. Line escapes a field so that it stays one visible
// line; Guard escapes, at the start of every line a writer passes on,
// what the runner would read as a command, and every control character
// but the line's own breaks and tabs.
package plaintext

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hides reports whether r would end a line or hide text: a control
// character, a Unicode line or paragraph separator, a bidirectional
// override or isolate.
func Hides(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// Line returns s with every character Hides written out as a Go escape
// such as \n or \u202e, and invalid UTF-8 as \x escapes: one visible
// line of what s says.
func Line(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, Hides) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case Hides(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Message is an error message as one line: each line break becomes "; "
// (errors.Join puts one between errors) and every other character Hides
// is escaped (Line). A message so made begins its line with what the
// caller prints before it, never with a field of it.
func Message(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "; ")
	return Line(s)
}

// commands are what a CI runner reads as a command at the start of a
// line, after spaces: GitHub's workflow commands and its log's own.
var commands = []string{"::", "##["}

// Guard returns a writer that passes what is written to w on, but escapes
// a line that would begin with a workflow command (a backslash before
// it: `\::error::`) and every control character other than tab, line
// feed and carriage return (which the runner takes for a line break too:
// progress bars use it). It keeps back at most the start of a line that
// could still be a command, and an unfinished UTF-8 character, until the
// next write or Flush. Guarding a Guard adds nothing.
func Guard(w io.Writer) *Guarded {
	if g, ok := w.(*Guarded); ok {
		return g
	}
	return &Guarded{w: w, lineStart: true}
}

// Guarded is the writer of Guard.
type Guarded struct {
	w         io.Writer
	lineStart bool   // no byte of the line's own passed yet
	held      []byte // kept back: the line's leading blanks and a command's prefix, or part of a character
}

// Raw returns the writer under w when w is a Guard, else w: for output
// that is meant to hold workflow commands (the github format).
func Raw(w io.Writer) io.Writer {
	if g, ok := w.(*Guarded); ok {
		return g.w
	}
	return w
}

// Fd is the file descriptor of the writer under g, when it has one: so
// that a terminal under a Guard is still seen as one.
func (g *Guarded) Fd() uintptr {
	if f, ok := g.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func (g *Guarded) Write(p []byte) (int, error) {
	buf := p
	if len(g.held) > 0 {
		buf = append(g.held, p...)
		g.held = nil
	}
	// Spans that need no change are passed on as they are; out gathers
	// what goes between them.
	clean := 0
	var err error
	emit := func(upTo int, extra []byte) {
		if err != nil {
			return
		}
		if upTo > clean {
			_, err = g.w.Write(buf[clean:upTo])
		}
		if err == nil && len(extra) > 0 {
			_, err = g.w.Write(extra)
		}
	}
	i := 0
	for i < len(buf) && err == nil {
		c := buf[i]
		if g.lineStart {
			rest := bytes.TrimLeft(buf[i:], " \t")
			blanks := len(buf[i:]) - len(rest)
			switch prefix, whole := commandAt(rest); {
			case len(rest) == 0 || prefix && !whole:
				emit(i, nil)
				g.held = append([]byte(nil), buf[i:]...)
				clean, i = len(buf), len(buf)
				continue
			case whole:
				emit(i+blanks, []byte{'\\'})
				clean = i + blanks
				i += blanks
			}
			g.lineStart = false
			continue
		}
		switch {
		case c == '\n' || c == '\r':
			g.lineStart = true
			i++
		case c < utf8.RuneSelf:
			if c != '\t' && Hides(rune(c)) {
				emit(i, []byte(Line(string(c))))
				clean = i + 1
			}
			i++
		default:
			if !utf8.FullRune(buf[i:]) {
				emit(i, nil)
				g.held = append([]byte(nil), buf[i:]...)
				clean, i = len(buf), len(buf)
				continue
			}
			r, n := utf8.DecodeRune(buf[i:])
			if (r == utf8.RuneError && n == 1) || Hides(r) {
				emit(i, []byte(Line(string(buf[i:i+n]))))
				clean = i + n
			}
			i += n
		}
	}
	emit(len(buf), nil)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// commandAt reports whether b begins with the prefix of a command
// (prefix), and whether with a whole one.
func commandAt(b []byte) (prefix, whole bool) {
	for _, c := range commands {
		n := min(len(b), len(c))
		if string(b[:n]) == c[:n] {
			prefix = true
			if n == len(c) {
				return true, true
			}
		}
	}
	return prefix, false
}

// Flush writes what g keeps back.
func (g *Guarded) Flush() error {
	if len(g.held) == 0 {
		return nil
	}
	held := g.held
	g.held = nil
	lineStart := g.lineStart
	g.lineStart = false // what is held is the line's start, not a command
	var err error
	if lineStart {
		_, err = g.w.Write(held)
	} else {
		_, err = g.w.Write([]byte(Line(string(held))))
	}
	return err
}
