package config

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/parser"
)

// root parses src as the file x.yaml and returns its document's body.
func root(t *testing.T, src string) Node {
	t.Helper()
	f, err := ParseInput("x.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseInput(%q): %v", src, err)
	}
	if len(f.Docs) == 0 {
		return NewNode("x.yaml", nil)
	}
	return NewNode("x.yaml", f.Docs[0].Body)
}

// wantError checks that err is an *Error whose text is want exactly:
// file:line:column: message.
func wantError(t *testing.T, err error, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v, want *Error %q", err, err, want)
	}
	if err.Error() != want {
		t.Errorf("error\n\t%s\nwant\n\t%s", err, want)
	}
}

func TestFields(t *testing.T) {
	tests := []struct {
		name, src string
		allowed   []string
		keys      []string // on success, in file order
		err       string
	}{
		{"in file order", "b: 1\na: 2\n", []string{"a", "b"}, []string{"b", "a"}, ""},
		{"any key when allowed is nil", "zz: 1\n", nil, []string{"zz"}, ""},
		{"flow mapping", "{a: 1, b: 2}", []string{"a", "b"}, []string{"a", "b"}, ""},
		{"null is empty", "~", []string{"a"}, nil, ""},
		{"unknown key at the key", "a: 1\nnosuch: 2\n", []string{"a", "b"},
			nil, `x.yaml:2:1: unknown key "nosuch" in m; allowed: a, b`},
		{"unknown key in a flow mapping", "{a: 1, nosuch: 2}", []string{"a"},
			nil, `x.yaml:1:8: unknown key "nosuch" in m; allowed: a`},
		{"a list", "[a, b]", nil, nil, "x.yaml:1:1: m must be a mapping, got a list"},
		{"a string", "hello", nil, nil, "x.yaml:1:1: m must be a mapping, got a string"},
		{"an integer key", "1: a\n", nil, nil, "x.yaml:1:1: keys in m must be plain names, got an integer"},
		{"a tag", "a: !!str x\n", nil, nil, "x.yaml:1:4: tags are not supported in scenarios"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := root(t, tt.src).Fields("m", tt.allowed)
			if tt.err != "" {
				wantError(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, f := range fs {
				keys = append(keys, f.Key)
			}
			if !slices.Equal(keys, tt.keys) {
				t.Errorf("keys %q, want %q", keys, tt.keys)
			}
		})
	}
}

// A key given twice is refused at its second place: by the YAML parser
// behind ParseInput, and by Fields for a tree parsed without that check.
func TestFieldsDuplicateKey(t *testing.T) {
	_, err := ParseInput("x.yaml", []byte("a: 1\nb: 2\na: 3\n"))
	wantError(t, err, `x.yaml:3:1: bad YAML: mapping key "a" already defined at [1:1]`)
	_, err = ParseInput("x.yaml", []byte("m:\n  a: 1\n  a: 3\n"))
	wantError(t, err, `x.yaml:3:3: bad YAML: mapping key "a" already defined at [2:3]`)

	f, err := parser.ParseBytes([]byte("a: 1\nb: 2\na: 3\n"), 0, parser.AllowDuplicateMapKey())
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewNode("x.yaml", f.Docs[0].Body).Fields("m", nil)
	wantError(t, err, `x.yaml:3:1: duplicate key "a" in m`)
}

// An entry's errors point at its key or its value, nested or not.
func TestFieldPositions(t *testing.T) {
	fs, err := root(t, "outer:\n  inner: 1\n  empty:\n  list: [1, two]\n").Fields("top", nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := fs[0].Value.Fields("outer", []string{"inner", "empty", "list"})
	if err != nil {
		t.Fatal(err)
	}
	if got := in[0].KeyAt.Errorf("k").Error(); got != "x.yaml:2:3: k" {
		t.Errorf("key position %q", got)
	}
	if got := in[0].Value.Errorf("v").Error(); got != "x.yaml:2:10: v" {
		t.Errorf("value position %q", got)
	}
	if !in[1].Value.IsNull() || in[1].Value.Describe() != "nothing" {
		t.Errorf("empty value: IsNull %v, Describe %q", in[1].Value.IsNull(), in[1].Value.Describe())
	}
	items, ok, err := in[2].Value.List()
	if err != nil || !ok || len(items) != 2 {
		t.Fatalf("List: %v %v %v", items, ok, err)
	}
	if got := items[1].Errorf("item").Error(); got != "x.yaml:4:13: item" {
		t.Errorf("item position %q", got)
	}
	if _, ok, _ := in[0].Value.List(); ok {
		t.Error("an integer reads as a list")
	}
	// A mapping's position is its first key's.
	if got := fs[0].Value.Errorf("m").Error(); got != "x.yaml:2:3: m" {
		t.Errorf("mapping position %q", got)
	}
}

func TestFieldReaders(t *testing.T) {
	fields := func(t *testing.T, src string) map[string]Field {
		t.Helper()
		fs, err := root(t, src).Fields("m", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]Field{}
		for _, f := range fs {
			m[f.Key] = f
		}
		return m
	}
	f := fields(t, "n: 7\nbig: 18446744073709551615\nneg: -3\ns: abc\nq: \"12\"\nport: 8080\nb: true\nl: [1]\nx: 1.5\nd: 500ms\nnounit: 5\nzero: 0\nbad: 5 parsecs\nmin: -1s\nf: 2.5\n")

	if v, err := f["n"].Int(1, 10); err != nil || v != 7 {
		t.Errorf("Int 7: %v %v", v, err)
	}
	_, err := f["n"].Int(8, 10)
	wantError(t, err, "x.yaml:1:4: n must be from 8 to 10, got 7")
	_, err = f["big"].Int(0, math.MaxInt32)
	// Above int64, as a uint64: clamped, never wrapped to a small value.
	wantError(t, err, "x.yaml:2:6: big must be from 0 to 2147483647, got 18446744073709551615")
	_, err = f["neg"].Int(0, 5)
	wantError(t, err, "x.yaml:3:6: neg must be from 0 to 5, got -3")
	_, err = f["q"].Int(0, 100)
	wantError(t, err, `x.yaml:5:4: q must be an integer from 0 to 100, got a string "12"`)
	_, err = f["x"].Int(0, 100)
	wantError(t, err, `x.yaml:9:4: x must be an integer from 0 to 100, got a number "1.5"`)

	for key, want := range map[string]string{"s": "abc", "q": "12", "port": "8080", "b": "true"} {
		if got, err := f[key].String(); err != nil || got != want {
			t.Errorf("String %s: %q %v, want %q", key, got, err, want)
		}
	}
	_, err = f["l"].String()
	wantError(t, err, "x.yaml:8:4: l must be a string, got a list")

	if v, err := f["b"].Bool(); err != nil || !v {
		t.Errorf("Bool true: %v %v", v, err)
	}
	_, err = f["q"].Bool()
	wantError(t, err, `x.yaml:5:4: q must be true or false, got a string "12"`)

	if got, err := f["s"].OneOf("letters", []string{"xyz", "abc"}); err != nil || got != "abc" {
		t.Errorf("OneOf: %q %v", got, err)
	}
	_, err = f["s"].OneOf("letters", []string{"x", "y"})
	wantError(t, err, `x.yaml:4:4: unknown letters "abc"; allowed: x, y`)

	if v, ok := f["f"].Number(); !ok || v != 2.5 {
		t.Errorf("Number 2.5: %v %v", v, ok)
	}
	if v, ok := f["n"].Number(); !ok || v != 7 {
		t.Errorf("Number 7: %v %v", v, ok)
	}
	if _, ok := f["q"].Number(); ok {
		t.Error(`Number of the string "12" is ok`)
	}

	if d, err := f["d"].Duration(0, time.Second); err != nil || d != 500*time.Millisecond {
		t.Errorf("Duration 500ms: %v %v", d, err)
	}
	if d, err := f["zero"].Duration(0, time.Second); err != nil || d != 0 {
		t.Errorf("Duration 0: %v %v", d, err)
	}
	_, err = f["nounit"].Duration(0, time.Minute)
	wantError(t, err, `x.yaml:11:9: nounit "5" has no unit; write e.g. 500ms or 5s`)
	_, err = f["bad"].Duration(0, time.Minute)
	wantError(t, err, `x.yaml:13:6: bad bad "5 parsecs"; write a duration such as 500ms or 5s`)
	_, err = f["min"].Duration(0, time.Minute)
	wantError(t, err, "x.yaml:14:6: min must not be negative, got -1s")
	_, err = f["d"].Duration(time.Second, time.Minute)
	wantError(t, err, "x.yaml:10:4: d must be from 1s to 1m0s, got 500ms")
	_, err = f["l"].Duration(0, time.Minute)
	wantError(t, err, "x.yaml:8:4: l must be a duration such as 500ms or 5s, got a list")

	if name, ok := f["s"].Value.Name(); !ok || name != "abc" {
		t.Errorf("Name: %q %v", name, ok)
	}
	if _, ok := f["n"].Value.Name(); ok {
		t.Error("an integer has a Name")
	}
}

func TestDescribe(t *testing.T) {
	fs, err := root(t, "a: x\nb: 1\nc: 1.5\nd: true\ne: [1]\nf: {g: 1}\nh:\ni: .inf\n").Fields("m", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a string", "an integer", "a number", "a boolean", "a list", "a mapping", "nothing", "a number"}
	for i, f := range fs {
		if got := f.Value.Describe(); got != want[i] {
			t.Errorf("%s: Describe %q, want %q", f.Key, got, want[i])
		}
	}
}

// Plain refuses what ParseInput lets through to a node built from the
// parser directly: tags, anchors and aliases.
func TestPlain(t *testing.T) {
	for src, want := range map[string]string{
		"a: !!int 3\n":     "x.yaml:1:4: tags are not supported in scenarios",
		"a: &x 3\nb: *x\n": "x.yaml:1:4: anchors and aliases are not supported in scenarios",
	} {
		f, err := parser.ParseBytes([]byte(src), 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewNode("x.yaml", f.Docs[0].Body).Fields("m", nil)
		wantError(t, err, want)
	}
}

// NewFileNode's path is what Source returns, for resolving; errors name
// the file as given.
func TestNewFileNode(t *testing.T) {
	f, err := ParseInput("x.yaml", []byte("a: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	n := NewFileNode("x.yaml", "/srv/ci/x.yaml", f.Docs[0].Body)
	fs, err := n.Fields("m", nil)
	if err != nil {
		t.Fatal(err)
	}
	items, _, _ := fs[0].Value.List()
	for _, c := range []Node{n, fs[0].KeyAt, fs[0].Value, items[0]} {
		if c.Source() != "/srv/ci/x.yaml" {
			t.Errorf("Source %q, want the path", c.Source())
		}
		if err := c.Errorf("e"); err.Source != "x.yaml" || !strings.HasPrefix(err.Error(), "x.yaml:1:") {
			t.Errorf("error %q names %q, want x.yaml", err, err.Source)
		}
	}
	if s := NewNode("y.yaml", nil).Source(); s != "y.yaml" {
		t.Errorf("NewNode Source %q", s)
	}
	if s := NewFileNode("y.yaml", "y.yaml", nil).Source(); s != "y.yaml" {
		t.Errorf("NewFileNode with its source as path: Source %q", s)
	}
	// The zero Node is a missing value at 1:1 of an unnamed file.
	if got := (Node{}).Errorf("x").Error(); got != ":1:1: x" {
		t.Errorf("zero Node error %q", got)
	}
}
