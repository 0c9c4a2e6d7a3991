package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const okInput = "name: x\nworkload:\n  kind: syscall\n  syscall: read\ntracers:\n  syscall: {syscalls: [read, write]}\ndescription: \"a: [b\"  # ]]]\n"

// aliasBomb is 9^8 strings from under 600 bytes once aliases expand.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("targets:\n  - name: t\n    kernel: k\n    cmdline: &a [x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for i, n := range strings.Split("bcdefgh", "") {
		fmt.Fprintf(&b, "  - name: t%d\n    kernel: k\n    cmdline: &%s [%s]\n", i, n, strings.Repeat("*"+prev+", ", 8)+"*"+prev)
		prev = n
	}
	return b.String()
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("targets:\n  - name: t\n    kernel: k\n")
	for i := range n {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	return b.String()
}

// TestCheckInputLimits: each shape of input the YAML parser chokes on is
// refused, at its line, before the parser sees it; and it is fast.
func TestCheckInputLimits(t *testing.T) {
	var deepBlock strings.Builder
	for i := range 100 {
		fmt.Fprintf(&deepBlock, "%sk%d:\n", strings.Repeat("  ", i), i)
	}
	for _, tc := range []struct {
		name, in, want string
		line           int
	}{
		{"100 000 nested [", "a: " + strings.Repeat("[", 100000) + "\n", "nested more than 64 deep", 1},
		{"nested {a:", "a: " + strings.Repeat("{a: ", 1000) + "\n", "nested more than 64 deep", 1},
		{"closers hidden in quotes", "a: " + strings.Repeat(`[ "]" `, 100) + "\n", "nested more than 64 deep", 1},
		{"closers hidden in comments", "a:\n" + strings.Repeat("  [ # ]\n", 100), "nested more than 64 deep", 64},
		{"deep indentation", deepBlock.String(), "nested more than 64 deep", 65},
		{"compact sequences", "a:\n  " + strings.Repeat("- ", 100) + "x\n", "nested more than 64 deep", 2},
		{"over 1 MiB", okInput + strings.Repeat("# padding padding padding padding padding padding\n", 25000), "the limit is 1048576 bytes", 1},
		{"100 000 keys", manyKeys(100000), "more than 2048 keys and list items", 2048},
		{"100 000 list items", "a:\n" + strings.Repeat("  - 1\n", 100000), "more than 2048 keys and list items", 2049},
		{"100 000 flow items", "a: [" + strings.Repeat("1,", 100000) + "1]\n", "more than 2048 keys and list items", 1},
		{"flow mapping of 100 000 keys", "a: {" + strings.Repeat("k: 1, ", 100000) + "}\n", "more than 2048 keys and list items", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := CheckInput("in.yaml", []byte(tc.in))
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("CheckInput = %v; want an *Error saying %q", err, tc.want)
			}
			if e.Line != tc.line || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line, at line %d", err, tc.line)
			}
		})
	}
}

// TestCheckInputPasses: real inputs, and text that only looks deep or
// many-keyed, pass; a byte order mark is dropped.
func TestCheckInputPasses(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"scenario", okInput},
		{"brackets inside words", "description: " + strings.Repeat("a[0] ", 2000) + "\n"},
		{"colons inside a block scalar", "description: |\n" + strings.Repeat("  a: b: c: d\n", 3000)},
		{"dashes in a quoted string", `description: "` + strings.Repeat("- ", 5000) + `"` + "\n"},
		{"2048 keys and items", manyKeys(2048 - 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := CheckInput("in.yaml", []byte("\xef\xbb\xbf"+tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.in {
				t.Error("input changed beyond its byte order mark")
			}
		})
	}
	for _, path := range []string{"../../vm/targets.yaml", "../../scenarios/builtin/syscall-read.yaml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseInput(path, b); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestParseInputAliasBomb: anchors and aliases are refused before a
// decoder could expand them (a 500-byte bomb once took 14 GiB).
func TestParseInputAliasBomb(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"alias bomb", aliasBomb()},
		{"anchor", "a: &x 1\n"},
		{"alias", "a: 1\nb: *x\n"},
		{"merge key", "a:\n  <<: {b: 1}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseInput("targets.yaml", []byte(tc.in))
			var e *Error
			if !errors.As(err, &e) || f != nil {
				t.Fatalf("ParseInput = %v; want an *Error", err)
			}
			if !strings.Contains(e.Msg, "not supported") || e.Line < 1 {
				t.Errorf("error %q", err)
			}
		})
	}
	if _, err := ParseInput("bad.yaml", []byte("a: [1\nb: }\n")); err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:") {
		t.Errorf("bad YAML: %v, want an error at bad.yaml:LINE", err)
	}
}

// TestReadInputOversizedFile: a file over the limit is refused from its
// size; the file is sparse, so reading it would show.
func TestReadInputOversizedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<40); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := ReadInput(path)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "1099511627776 bytes") || time.Since(start) > time.Second {
		t.Errorf("ReadInput = %v after %v", err, time.Since(start))
	}
}
