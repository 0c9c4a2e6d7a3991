package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Limits of YAML input: scenario files, targets files, anything tailgate
// reads as YAML. The YAML parser's time and memory grow faster than the
// input: 100 000 nested "[" (200 KB) took 22 s and 15 GB, 100 000 keys
// (1 MB) 34 s and 427 MB, and a decoder expands aliases (a 500-byte alias
// bomb took 14 GiB). So large, deep or many-keyed input is refused before
// it is parsed, and anchors and aliases are refused before anything is
// decoded. A scenario is a few hundred bytes, nested four deep, with tens
// of keys; a targets file has seven keys a target.
const (
	MaxInputSize  = 1 << 20 // bytes
	MaxInputDepth = 64      // nested collections, block and flow
	// MaxInputEntries bounds mapping keys and list items together: 1000
	// block keys parse in 13 ms here, 4000 in 265 ms.
	MaxInputEntries = 2048
)

// ReadInput reads a YAML input file of at most MaxInputSize bytes; a larger
// one is an *Error, found from its size before it is read (or after
// MaxInputSize bytes of a pipe).
func ReadInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxInputSize {
		return nil, tooLarge(path, st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxInputSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInputSize {
		return nil, tooLarge(path, -1)
	}
	return b, nil
}

// CheckFile refuses a file over the limits of YAML input (CheckInput:
// size, nesting, keys) before a YAML parser gets it, as an *Error; other
// faults (a missing file) it leaves to whoever loads the file to report.
// "" (no file) passes.
func CheckFile(path string) error {
	if path == "" {
		return nil
	}
	b, err := ReadInput(path)
	if err == nil {
		_, err = CheckInput(path, b)
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return nil
}

func tooLarge(source string, size int64) *Error {
	what := "more than 1 MiB"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes", size)
	}
	return &Error{Source: source, Line: 1, Column: 1, Msg: fmt.Sprintf("the file is %s; the limit is %d bytes (1 MiB)", what, MaxInputSize)}
}

// CheckInput checks YAML input against MaxInputSize, MaxInputDepth and
// MaxInputEntries before it is parsed, in one pass over its bytes, and
// returns it without a UTF-8 byte order mark. An error is an *Error at the
// line where the input goes over a limit.
func CheckInput(source string, b []byte) ([]byte, error) {
	if len(b) > MaxInputSize {
		return nil, tooLarge(source, int64(len(b)))
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	switch line, over := scanShape(b, MaxInputDepth, MaxInputEntries); over {
	case overDepth:
		return nil, &Error{Source: source, Line: line, Column: 1,
			Msg: fmt.Sprintf("nested more than %d deep; the limit is %d levels of lists and mappings", MaxInputDepth, MaxInputDepth)}
	case overEntries:
		return nil, &Error{Source: source, Line: line, Column: 1,
			Msg: fmt.Sprintf("more than %d keys and list items; the limit is %d in a file", MaxInputEntries, MaxInputEntries)}
	}
	return b, nil
}

// ParseInput checks YAML input (CheckInput), parses it into a syntax tree
// and refuses anchors, aliases and merge keys anywhere in it, so that a
// decoder of the tree has nothing to expand. Every error is an *Error.
func ParseInput(source string, b []byte) (*ast.File, error) {
	b, err := CheckInput(source, b)
	if err != nil {
		return nil, err
	}
	f, err := parseBytes(b)
	if err != nil {
		return nil, yamlError(source, err)
	}
	for _, doc := range f.Docs {
		var bad ast.Node
		ast.Walk(visitFunc(func(n ast.Node) bool {
			switch n.(type) {
			case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
				bad = n
			}
			return bad == nil
		}), doc)
		if bad != nil {
			return nil, NewNode(source, bad).Errorf("anchors, aliases and merge keys are not supported; write the values out")
		}
	}
	return f, nil
}

// parseBytes parses YAML; the parser panics on some odd input.
func parseBytes(b []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("cannot parse YAML: %v", r)
		}
	}()
	return parser.ParseBytes(b, 0)
}

// yamlError is err, from the YAML parser, as an *Error of source at the
// token it names.
func yamlError(source string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Source: source, Line: 1, Column: 1, Msg: "bad YAML: " + ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line >= 1 {
			e.Line, e.Column = tk.Position.Line, max(tk.Position.Column, 1)
		}
		return e
	}
	return &Error{Source: source, Line: 1, Column: 1, Msg: "bad YAML: " + err.Error()}
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// What scanShape found over its limits.
const (
	overNothing = iota
	overDepth
	overEntries
)

// scanShape returns the first line at which the collections of YAML input
// b nest deeper than limit, or hold more than entries mapping keys and
// list items in all, and which limit that line passes (overNothing, line
// 0, for none). It scans the bytes once, without parsing:
// block collections by their indentation (and "- - x" compact sequences),
// flow collections by their brackets, skipping quoted scalars, block
// scalars and comments. What it cannot place counts as depth: a mistaken
// refusal needs 64 levels of odd text, a mistaken pass would hand the
// parser the input it chokes on. Entries are counted the same way: a key
// is a ":" that ends a plain token, an item a "- " that opens a block
// entry or a "[", "{" or "," of a flow collection (so an entry of a flow
// mapping counts twice).
func scanShape(b []byte, limit, entries int) (int, int) {
	s := &shapeScanner{limit: limit, entries: entries, literal: -1, tokenStart: true}
	for n := 1; len(b) > 0; n++ {
		var ln []byte
		ln, b, _ = bytes.Cut(b, []byte("\n"))
		if over := s.line(bytes.TrimSuffix(ln, []byte("\r"))); over != overNothing {
			return n, over
		}
	}
	return 0, overNothing
}

// shapeScanner is scanShape's state between lines.
type shapeScanner struct {
	limit, entries int
	count          int   // mapping keys and list items so far
	indents        []int // columns of the open block collections
	flow           int   // open flow collections
	quote          byte  // the quote of the scalar being read, or 0
	literal        int   // in a block scalar: the indentation its lines exceed; else -1
	tokenStart     bool
}

// entry counts a key or an item and reports whether there are too many.
func (s *shapeScanner) entry() bool {
	s.count++
	return s.count > s.entries
}

// line scans one line (without its line break) and returns the limit it
// passes, or overNothing.
func (s *shapeScanner) line(ln []byte) int {
	indent := 0
	for indent < len(ln) && ln[indent] == ' ' {
		indent++
	}
	blank := indent == len(ln)
	if s.literal >= 0 {
		if blank || indent > s.literal {
			return overNothing
		}
		s.literal = -1
	}
	i := 0
	if s.quote == 0 && s.flow == 0 {
		if blank || ln[indent] == '#' {
			return overNothing
		}
		var over int
		if i, over = s.blockStart(ln, indent); over != overNothing {
			return over
		}
	}
	return s.tokens(ln, i, indent)
}

// blockStart places a line of block context by its indentation: it closes
// the block collections the line is not inside, opens the one it starts,
// and returns where the line's first token begins.
func (s *shapeScanner) blockStart(ln []byte, indent int) (int, int) {
	for len(s.indents) > 0 && s.indents[len(s.indents)-1] >= indent {
		s.indents = s.indents[:len(s.indents)-1]
	}
	s.indents = append(s.indents, indent)
	i := indent
	// "- - x" and "? x" open a collection each, on one line.
	for i < len(ln) && (ln[i] == '-' || ln[i] == '?') && (i+1 == len(ln) || ln[i+1] == ' ') {
		i++
		for i < len(ln) && ln[i] == ' ' {
			i++
		}
		s.indents = append(s.indents, i)
		if s.entry() {
			return i, overEntries
		}
	}
	if len(s.indents) > s.limit {
		return i, overDepth
	}
	s.tokenStart = true
	return i, overNothing
}

// tokens scans ln from byte i: flow brackets, keys, quoted scalars, and
// the start of a comment or a block scalar, which end the line's scan.
func (s *shapeScanner) tokens(ln []byte, i, indent int) int {
	for ; i < len(ln); i++ {
		c := ln[i]
		if s.quote != 0 {
			i = s.quoted(ln, i)
			continue
		}
		next := byte(' ')
		if i+1 < len(ln) {
			next = ln[i+1]
		}
		switch {
		case c == '#' && (i == 0 || ln[i-1] == ' ' || ln[i-1] == '\t'):
			return overNothing
		case c == ' ' || c == '\t':
		case c == '[' || c == '{':
			// Outside a flow collection a bracket only opens one at the
			// start of a value; counting it elsewhere too errs on the
			// side of depth but would refuse "a[0]" text repeated.
			if s.tokenStart || s.flow > 0 {
				s.flow++
				s.tokenStart = true
				if len(s.indents)+s.flow > s.limit {
					return overDepth
				}
				if s.entry() {
					return overEntries
				}
			}
		case (c == ']' || c == '}') && s.flow > 0:
			s.flow--
			s.tokenStart = false
		case c == ',' && s.flow > 0,
			c == ':' && (next == ' ' || next == '\t' || s.flow > 0 && bytes.IndexByte([]byte(",[]{}"), next) >= 0):
			s.tokenStart = true
			if s.entry() {
				return overEntries
			}
		case !s.tokenStart:
		case c == '"' || c == '\'':
			s.quote = c
		case (c == '|' || c == '>') && s.flow == 0:
			s.literal = indent
			return overNothing
		case (c == '-' || c == '?') && (next == ' ' || next == '\t'):
		case c == '&' || c == '!':
			// An anchor or tag: the value follows it.
			for i+1 < len(ln) && ln[i+1] != ' ' {
				i++
			}
		default:
			s.tokenStart = false
		}
	}
	return overNothing
}

// quoted reads byte i of ln inside a quoted scalar: an escape skips the
// next byte, the closing quote ends the scalar. It returns the last byte
// read.
func (s *shapeScanner) quoted(ln []byte, i int) int {
	c := ln[i]
	switch {
	case s.quote == '"' && c == '\\':
		i++
	case s.quote == '\'' && c == '\'' && i+1 < len(ln) && ln[i+1] == '\'':
		i++
	case c == s.quote:
		s.quote, s.tokenStart = 0, false
	}
	return i
}
