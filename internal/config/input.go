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
	count := 0
	entry := func() bool {
		count++
		return count > entries
	}
	var indents []int // columns of the open block collections
	flow := 0         // open flow collections
	var quote byte    // the quote of the scalar being read, or 0
	literal := -1     // in a block scalar: the indentation its lines exceed
	tokenStart := true
	for n := 1; len(b) > 0; n++ {
		var ln []byte
		ln, b, _ = bytes.Cut(b, []byte("\n"))
		ln = bytes.TrimSuffix(ln, []byte("\r"))
		indent := 0
		for indent < len(ln) && ln[indent] == ' ' {
			indent++
		}
		blank := indent == len(ln)
		if literal >= 0 {
			if blank || indent > literal {
				continue
			}
			literal = -1
		}
		i := 0
		if quote == 0 && flow == 0 {
			if blank || ln[indent] == '#' {
				continue
			}
			for len(indents) > 0 && indents[len(indents)-1] >= indent {
				indents = indents[:len(indents)-1]
			}
			indents = append(indents, indent)
			i = indent
			// "- - x" and "? x" open a collection each, on one line.
			for i < len(ln) && (ln[i] == '-' || ln[i] == '?') && (i+1 == len(ln) || ln[i+1] == ' ') {
				i++
				for i < len(ln) && ln[i] == ' ' {
					i++
				}
				indents = append(indents, i)
				if entry() {
					return n, overEntries
				}
			}
			if len(indents) > limit {
				return n, overDepth
			}
			tokenStart = true
		}
	scan:
		for ; i < len(ln); i++ {
			c := ln[i]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					i++
				case quote == '\'' && c == '\'' && i+1 < len(ln) && ln[i+1] == '\'':
					i++
				case c == quote:
					quote, tokenStart = 0, false
				}
				continue
			}
			next := byte(' ')
			if i+1 < len(ln) {
				next = ln[i+1]
			}
			switch {
			case c == '#' && (i == 0 || ln[i-1] == ' ' || ln[i-1] == '\t'):
				break scan
			case c == ' ' || c == '\t':
			case c == '[' || c == '{':
				// Outside a flow collection a bracket only opens one at the
				// start of a value; counting it elsewhere too errs on the
				// side of depth but would refuse "a[0]" text repeated.
				if tokenStart || flow > 0 {
					flow++
					tokenStart = true
					if len(indents)+flow > limit {
						return n, overDepth
					}
					if entry() {
						return n, overEntries
					}
				}
			case (c == ']' || c == '}') && flow > 0:
				flow--
				tokenStart = false
			case c == ',' && flow > 0:
				tokenStart = true
				if entry() {
					return n, overEntries
				}
			case c == ':' && (next == ' ' || next == '\t' || flow > 0 && bytes.IndexByte([]byte(",[]{}"), next) >= 0):
				tokenStart = true
				if entry() {
					return n, overEntries
				}
			case !tokenStart:
			case c == '"' || c == '\'':
				quote = c
			case (c == '|' || c == '>') && flow == 0:
				literal = indent
				break scan
			case (c == '-' || c == '?') && (next == ' ' || next == '\t'):
			case c == '&' || c == '!':
				// An anchor or tag: the value follows it.
				for i+1 < len(ln) && ln[i+1] != ' ' {
					i++
				}
			default:
				tokenStart = false
			}
		}
	}
	return 0, overNothing
}
