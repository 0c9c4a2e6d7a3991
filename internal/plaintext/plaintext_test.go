package plaintext

import (
	"bytes"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"6.1.0-28-amd64", "6.1.0-28-amd64"},
		{"6.1\n::error::pwned", `6.1\n::error::pwned`},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"tab\there", `tab\there`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Message("first\nsecond\r\n::error::x"); got != "first; second; ::error::x" {
		t.Errorf("Message = %q", got)
	}
}

// TestGuard: whatever the chunks a text is written in, no line that
// leaves the Guard begins (after blanks) with a workflow command, no
// control character but a line's own breaks and tabs passes, and the
// rest is as written.
func TestGuard(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"::error::pwned\n", `\::error::pwned` + "\n"},
		{"kernel 6.1\n  ::error::pwned\n", "kernel 6.1\n  \\::error::pwned\n"},
		{"x\r::warning::y\n", "x\r\\::warning::y\n"},
		{"##[error]z\n", `\##[error]z` + "\n"},
		{"a::b ##[c\n:: \n", "a::b ##[c\n\\:: \n"},
		{":x\n#y\n##z\n", ":x\n#y\n##z\n"},
		{"\t::set-output name=a::b", "\t\\::set-output name=a::b"},
		{"esc\x1b[31mred\x07\n", `esc\x1b[31mred\a` + "\n"},
		{"c1\u0085nel \u202e\n", `c1\u0085nel \u202e` + "\n"},
		{"naïve ✓\n", "naïve ✓\n"},
		{"\r[====  ] 2/4\r", "\r[====  ] 2/4\r"},
		{"  ", "  "},
	} {
		for _, chunk := range []int{1, 2, 3, 1000} {
			var b bytes.Buffer
			g := Guard(&b)
			for in := tc.in; in != ""; {
				n := min(chunk, len(in))
				if _, err := g.Write([]byte(in[:n])); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			if err := g.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("Guard(%q) in chunks of %d = %q, want %q", tc.in, chunk, b.String(), tc.want)
			}
			for _, line := range strings.FieldsFunc(b.String(), func(r rune) bool { return r == '\n' || r == '\r' }) {
				if l := strings.TrimLeft(line, " \t"); strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##[") {
					t.Errorf("Guard(%q) passed a command line %q", tc.in, line)
				}
			}
		}
	}
	var b bytes.Buffer
	if g := Guard(&b); Guard(g) != g || Raw(g) != &b || Raw(&b) != &b {
		t.Error("Guard of a Guard, or Raw, is not what it should be")
	}
}
