// Package config reads the values of a scenario file's YAML strictly: typed
// accessors on syntax-tree nodes that refuse unknown keys, wrong types and
// out-of-range values with an *Error at file:line:column. The scenario
// parser and every tracer's and workload kind's config parser share it, so
// a tracer package can read its own keys without importing the scenarios.
package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	gotoken "github.com/goccy/go-yaml/token"
)

// Error is a bad input file: where and what.
type Error struct {
	Source       string // file path or "builtin:NAME.yaml"
	Line, Column int    // 1-based
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Source, e.Line, e.Column, e.Msg)
}

// Node is a YAML value of the file named source. The zero Node is a
// missing value at 1:1 of an unnamed file.
type Node struct {
	source string
	// path is the file's path to resolve its relative paths against, when
	// it differs from source (an absolute path for a file named by a
	// relative one).
	path string
	n    ast.Node
}

// NewNode returns the Node of n in the file named source.
func NewNode(source string, n ast.Node) Node { return Node{source: source, n: n} }

// NewFileNode returns the Node of n in the file named source in errors
// and found at path, which Source returns: the file's relative paths
// (./server) are taken relative to path's directory, which does not
// depend on how the user named the file (x.yaml, whose directory "."
// would make ./server a bare name).
func NewFileNode(source, path string, n ast.Node) Node {
	if path == source {
		path = ""
	}
	return Node{source: source, path: path, n: n}
}

// AST is the syntax-tree node, for what the accessors do not cover.
func (n Node) AST() ast.Node { return n.n }

// Source is the path of the file n is in, to resolve the file's relative
// paths against: NewFileNode's path, else the source errors name.
func (n Node) Source() string {
	if n.path != "" {
		return n.path
	}
	return n.source
}

// Errorf returns an *Error at n.
func (n Node) Errorf(format string, args ...any) *Error {
	line, col := position(n.n)
	return &Error{Source: n.source, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// at returns the Node of another node of the same file.
func (n Node) at(m ast.Node) Node { return Node{source: n.source, path: n.path, n: m} }

// IsNull reports whether n is empty (null, ~ or nothing after the colon).
func (n Node) IsNull() bool {
	_, ok := n.n.(*ast.NullNode)
	return ok || n.n == nil
}

// Text is the source text of a scalar node.
func (n Node) Text() string {
	if tk := token(n.n); tk != nil {
		return tk.Value
	}
	return ""
}

// Name returns the value of a plain string scalar (a name such as read).
func (n Node) Name() (string, bool) {
	s, ok := n.n.(*ast.StringNode)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// Describe says what kind of value n is, for errors: "a list", "an integer".
func (n Node) Describe() string {
	switch n.n.(type) {
	case nil, *ast.NullNode:
		return "nothing"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a " + strings.ToLower(n.n.Type().String())
}

// Plain rejects the YAML features a scenario has no use for (anchors,
// aliases, tags, merge keys), so that what is read is what is written.
func (n Node) Plain() error {
	switch n.n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return n.Errorf("anchors and aliases are not supported in scenarios")
	case *ast.TagNode:
		return n.Errorf("tags are not supported in scenarios")
	case *ast.MergeKeyNode:
		return n.Errorf("merge keys are not supported in scenarios")
	}
	return nil
}

// List returns the items of a list, each checked with Plain. ok is false
// when n is not a list.
func (n Node) List() (items []Node, ok bool, err error) {
	seq, ok := n.n.(*ast.SequenceNode)
	if !ok {
		return nil, false, nil
	}
	for _, v := range seq.Values {
		item := n.at(v)
		if err := item.Plain(); err != nil {
			return nil, true, err
		}
		items = append(items, item)
	}
	return items, true, nil
}

// Field is one key: value entry of a mapping.
type Field struct {
	Key   string
	KeyAt Node // the key, where errors about the entry point
	Value Node // never a nil node: an empty value is a null node
}

// Fields returns the entries of mapping n. what names the mapping in
// errors ("tracers.syscall"); a key not in allowed is an error unless
// allowed is nil. A null value is an empty mapping.
func (n Node) Fields(what string, allowed []string) ([]Field, error) {
	if err := n.Plain(); err != nil {
		return nil, err
	}
	var entries []*ast.MappingValueNode
	switch m := n.n.(type) {
	case nil, *ast.NullNode:
		return nil, nil
	case *ast.MappingNode:
		entries = m.Values
	case *ast.MappingValueNode:
		entries = []*ast.MappingValueNode{m}
	default:
		return nil, n.Errorf("%s must be a mapping, got %s", what, n.Describe())
	}
	var fs []Field
	seen := map[string]bool{}
	for _, e := range entries {
		key := n.at(e.Key)
		if err := key.Plain(); err != nil {
			return nil, err
		}
		k, ok := e.Key.(*ast.StringNode)
		if !ok {
			return nil, key.Errorf("keys in %s must be plain names, got %s", what, key.Describe())
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, key.Errorf("unknown key %q in %s; allowed: %s", k.Value, what, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, key.Errorf("duplicate key %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		v := e.Value
		if v == nil {
			v = ast.Null(e.Start)
		}
		value := n.at(v)
		if err := value.Plain(); err != nil {
			return nil, err
		}
		fs = append(fs, Field{Key: k.Value, KeyAt: key, Value: value})
	}
	return fs, nil
}

// String reads a string; a number or boolean reads as its source text.
func (f Field) String() (string, error) {
	switch v := f.Value.n.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return v.Value.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return f.Value.Text(), nil
	}
	return "", f.Value.Errorf("%s must be a string, got %s", f.Key, f.Value.Describe())
}

// OneOf reads a string that must be one of allowed; what names the value
// in errors ("fork mode").
func (f Field) OneOf(what string, allowed []string) (string, error) {
	s, err := f.String()
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, s) {
		return "", f.Value.Errorf("unknown %s %q; allowed: %s", what, s, strings.Join(allowed, ", "))
	}
	return s, nil
}

// Bool reads true or false.
func (f Field) Bool() (bool, error) {
	b, ok := f.Value.n.(*ast.BoolNode)
	if !ok {
		return false, f.Value.Errorf("%s must be true or false, got %s %q", f.Key, f.Value.Describe(), f.Value.Text())
	}
	return b.Value, nil
}

// Int reads an integer from lo to hi.
func (f Field) Int(lo, hi int) (int, error) {
	v, ok := f.Value.n.(*ast.IntegerNode)
	if !ok {
		return 0, f.Value.Errorf("%s must be an integer from %d to %d, got %s %q", f.Key, lo, hi, f.Value.Describe(), f.Value.Text())
	}
	var n int64
	switch x := v.Value.(type) {
	case int64:
		n = x
	case uint64:
		n = math.MaxInt64
		if x < math.MaxInt64 {
			n = int64(x)
		}
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, f.Value.Errorf("%s must be from %d to %d, got %s", f.Key, lo, hi, f.Value.Text())
	}
	return int(n), nil
}

// Number reads an integer or a float; ok is false for anything else.
func (f Field) Number() (float64, bool) {
	switch v := f.Value.n.(type) {
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return float64(x), true
		case uint64:
			return float64(x), true
		}
	case *ast.FloatNode:
		return v.Value, true
	}
	return 0, false
}

// Duration reads a Go duration string such as "500ms" or "5s", from lo to
// hi.
func (f Field) Duration(lo, hi time.Duration) (time.Duration, error) {
	src := ""
	switch v := f.Value.n.(type) {
	case *ast.StringNode:
		src = v.Value
	case *ast.IntegerNode, *ast.FloatNode:
		src = f.Value.Text()
	default:
		return 0, f.Value.Errorf("%s must be a duration such as 500ms or 5s, got %s", f.Key, f.Value.Describe())
	}
	d, err := time.ParseDuration(src)
	if err != nil {
		if _, numErr := strconv.ParseFloat(src, 64); numErr == nil && src != "0" {
			return 0, f.Value.Errorf("%s %q has no unit; write e.g. 500ms or 5s", f.Key, src)
		}
		return 0, f.Value.Errorf("bad %s %q; write a duration such as 500ms or 5s", f.Key, src)
	}
	if d < lo || d > hi {
		if d < 0 {
			return 0, f.Value.Errorf("%s must not be negative, got %s", f.Key, src)
		}
		return 0, f.Value.Errorf("%s must be from %v to %v, got %s", f.Key, lo, hi, src)
	}
	return d, nil
}

// position returns where n starts: for a block mapping, its first key.
func position(n ast.Node) (line, col int) {
	if n == nil {
		return 1, 1
	}
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return position(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return position(m.Key)
	}
	tk := token(n)
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return 1, 1
	}
	return tk.Position.Line, max(tk.Position.Column, 1)
}

// token returns n's token, or nil. Some nodes of a tree built from odd
// input have no token and panic in GetToken (a document without a
// "---"), so this asks only the node types known to be safe.
func token(n ast.Node) *gotoken.Token {
	switch d := n.(type) {
	case nil:
		return nil
	case *ast.DocumentNode:
		return d.Start
	}
	return n.GetToken()
}
